-- The chain functions are inlined into the statements that call them.
--
-- chain_field(text) calls convert_to and chain_microseconds calls extract(epoch FROM timestamptz);
-- PostgreSQL marks both STABLE. A function declared IMMUTABLE whose body is only STABLE is never
-- inlined: every call of chain_hash went through the SQL-function executor, which parsed and planned
-- its body again in each transaction. That was about a quarter of the server's time per append
-- (perf, append_events with one writer). Declared STABLE, which is what they are, the planner
-- replaces each call by its expression once, in the statement's cached plan. The bytes they
-- compute are unchanged.
ALTER FUNCTION chain_field(text) STABLE;
ALTER FUNCTION chain_microseconds(timestamptz) STABLE;
ALTER FUNCTION chain_hash(bytea, events) STABLE;
