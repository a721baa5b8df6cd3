-- Snapshots of the projector's fold, so that a projector starts from the latest one instead of
-- folding the whole log again (see README "Projections").
--
-- A snapshot is the fold of the log through `position`, a pure function of that prefix, written
-- by one version of the fold's declarations (`version`; another version is never read). It is
-- kept in `parts` parts, each readable on its own (the first: all but the views; then runs of
-- views); `log_hash` is the hash of the event at `position` (the chain through it), `digest` the
-- SHA-256 of the part. A projector reads one only if these still hold.
--
-- UNLOGGED: a snapshot is a cache of what the log already says, so it costs no WAL; after a crash
-- the table is empty and the next projector folds the log, as before snapshots.
CREATE UNLOGGED TABLE projector_snapshots (
    position  bigint      NOT NULL CHECK (position > 0),
    part      integer     NOT NULL CHECK (part >= 0),
    parts     integer     NOT NULL,
    version   integer     NOT NULL,
    log_hash  bytea       NOT NULL,
    digest    bytea       NOT NULL,
    bytes     bytea       NOT NULL,
    taken_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (position, part)
);

-- Out of line and not compressed: the snapshot is compact already, and compressing hundreds of
-- megabytes would cost more than it saves.
ALTER TABLE projector_snapshots ALTER COLUMN bytes SET STORAGE EXTERNAL;

COMMENT ON TABLE projector_snapshots IS 'The projector''s fold through a position, to start from (a cache of the log; unlogged).';

GRANT SELECT, INSERT, UPDATE, DELETE ON projector_snapshots TO ledger_projector;
