-- `ledger show subscription CHANNEL:ORIGINAL_TX` lists the subscription's transactions: find them
-- by original transaction id instead of scanning every transaction. (Rebuilds copy the live
-- tables' indexes onto their shadow tables, so this one survives them.)
CREATE INDEX rm_transactions_original ON rm_transactions (original_transaction_id);
