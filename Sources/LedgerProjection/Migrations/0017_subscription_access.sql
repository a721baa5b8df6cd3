-- A subscription's access as the store last signed it (see docs/domain.md, subscription states):
-- until when access runs (the paid period, grace to its end, none past a pause or a revocation),
-- and the buyer's answer to a price increase. Written after `positions`, as new columns are.
ALTER TABLE rm_subscriptions
    ADD COLUMN access_until  timestamptz,
    ADD COLUMN price_consent text;

COMMENT ON COLUMN rm_subscriptions.access_until IS 'Until when the store''s word gives access: the paid period, grace to its end, none past a pause or a revocation.';
COMMENT ON COLUMN rm_subscriptions.price_consent IS 'The buyer''s answer to a price increase (pending, accepted), as the store signed it.';
