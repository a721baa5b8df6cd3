-- The projector's role (created by 0004) writes the read models and its checkpoints, and nothing
-- else; readers and auditors read them. Rebuild (an owner's maintenance command, like migrate)
-- grants the same on the tables it swaps in.
GRANT SELECT, INSERT, UPDATE, DELETE ON projection_checkpoints, rm_orders, rm_transactions, rm_subscriptions,
    rm_users, rm_entitlement_periods, rm_anomalies TO ledger_projector;
GRANT SELECT ON projection_checkpoints, rm_orders, rm_transactions, rm_subscriptions, rm_users,
    rm_entitlement_periods, rm_anomalies TO ledger_reader, ledger_auditor;
