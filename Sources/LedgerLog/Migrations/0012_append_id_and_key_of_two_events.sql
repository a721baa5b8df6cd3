-- append_events as in 0011, with one more refusal the Swift library already makes: an event whose
-- id belongs to one stored event and whose idempotency key to another is a conflict (SQLSTATE
-- LK409, nothing written). Before, when the event holding the key came first in the log and had the
-- same content, its position came back as a safe retry although the id named another event.
-- CREATE OR REPLACE keeps the function's owner and its EXECUTE grant to ledger_writer.

-- append_events was redefined here; its current text is Functions/append_events.sql, which every `ledger migrate` applies
