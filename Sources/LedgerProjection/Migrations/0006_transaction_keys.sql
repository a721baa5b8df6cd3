-- A store transaction id is unique per channel and app, not across them. rm_transactions is keyed
-- by the fold's transaction key (the store's id, or channel:app:id when another channel or app
-- uses the same id) and records the app. Existing rows keep their id as their key; a log where one
-- id was used by two channels or apps needs `ledger rebuild transactions` to show both.
ALTER TABLE rm_transactions DROP CONSTRAINT rm_transactions_pkey;
ALTER TABLE rm_transactions ADD COLUMN app text, ADD COLUMN transaction_key text;
UPDATE rm_transactions SET transaction_key = transaction_id;
ALTER TABLE rm_transactions ALTER COLUMN transaction_key SET NOT NULL, ADD PRIMARY KEY (transaction_key);
CREATE INDEX rm_transactions_id ON rm_transactions (transaction_id);
