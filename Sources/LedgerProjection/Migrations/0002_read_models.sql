-- Read models: projections of the log (order status, owed versus granted per store transaction,
-- subscriptions, user entitlements, anomalies). Derived data: `ledger rebuild` can recreate every
-- row from the log, and builds into shadow copies (CREATE TABLE ... LIKE) before swapping them in.

-- How far each projection has applied the log; written in the same transaction as its rows.
CREATE TABLE projection_checkpoints (
    projection  text PRIMARY KEY,
    position    bigint NOT NULL CHECK (position >= 0),
    updated_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE rm_orders (
    order_id             text PRIMARY KEY,
    user_id              text,
    channel              text,
    product_id           text,
    amount               bigint,
    currency             text,
    status               text NOT NULL,
    launch_attempts      bigint NOT NULL,
    last_callback_state  text,
    transaction_id       text,
    binding_method       text,
    verified_product_id  text,
    product_mismatch     boolean NOT NULL,
    refunded_amount      bigint,
    close_reason         text,
    closed_after_payment boolean NOT NULL,
    last_position        bigint NOT NULL,
    positions            bigint[] NOT NULL
);
CREATE INDEX rm_orders_user ON rm_orders (user_id);

-- One row per store transaction: what the rules owe and what fulfilment granted.
CREATE TABLE rm_transactions (
    transaction_id          text PRIMARY KEY,
    channel                 text,
    original_transaction_id text,
    user_id                 text,
    order_id                text,
    product_id              text,
    quantity                bigint NOT NULL,
    purchase_date           timestamptz,
    expires_date            timestamptz,
    price_amount            bigint,
    currency                text,
    verified_position       bigint,
    failed_verifications    bigint NOT NULL,
    is_renewal              boolean NOT NULL,
    binding_method          text,
    bound_users             text[] NOT NULL,
    reported_users          text[] NOT NULL,
    refund_state            text NOT NULL,
    refunded_amount         bigint,
    upgraded                boolean NOT NULL,
    unit                    text,
    owed_units              bigint NOT NULL,
    granted_units           bigint NOT NULL,
    revoked_units           bigint NOT NULL,
    owed_status             text NOT NULL,
    last_position           bigint NOT NULL,
    positions               bigint[] NOT NULL
);
CREATE INDEX rm_transactions_user ON rm_transactions (user_id);

CREATE TABLE rm_subscriptions (
    subscription_id         text PRIMARY KEY,
    channel                 text NOT NULL,
    original_transaction_id text NOT NULL,
    user_id                 text,
    product_id              text,
    pending_product_id      text,
    status                  text NOT NULL,
    expires_at              timestamptz,
    auto_renew              boolean,
    grace_until             timestamptz,
    periods                 bigint NOT NULL,
    last_position           bigint NOT NULL,
    positions               bigint[] NOT NULL
);
CREATE INDEX rm_subscriptions_user ON rm_subscriptions (user_id);

CREATE TABLE rm_users (
    user_id            text PRIMARY KEY,
    coins_credited     bigint NOT NULL,
    coins_spent        bigint NOT NULL,
    coins_clawed_back  bigint NOT NULL,
    coin_balance       bigint NOT NULL,
    negative_since     bigint,
    features           text[] NOT NULL,
    last_position      bigint NOT NULL,
    positions          bigint[] NOT NULL
);

-- Entitlement time per user, stacked across every product feeding it (seed 004, 4.4).
CREATE TABLE rm_entitlement_periods (
    user_id      text NOT NULL,
    entitlement  text NOT NULL,
    total_days   bigint NOT NULL,
    starts_at    timestamptz NOT NULL,
    ends_at      timestamptz NOT NULL,
    PRIMARY KEY (user_id, entitlement)
);

-- Facts a projection could not apply as they stand, kept for the audit.
CREATE TABLE rm_anomalies (
    position  bigint NOT NULL,
    kind      text NOT NULL,
    detail    text NOT NULL,
    PRIMARY KEY (position, kind, detail)
);

GRANT SELECT ON projection_checkpoints, rm_orders, rm_transactions, rm_subscriptions, rm_users,
    rm_entitlement_periods, rm_anomalies TO ledger_reader;
