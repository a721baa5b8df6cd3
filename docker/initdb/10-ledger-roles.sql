-- Runs once, when the PostgreSQL container first initializes its data directory. The ledger's
-- migration creates its login roles without passwords (a private cluster lets them in over its
-- Unix socket); over TCP they need passwords, so they are made here first, with the passwords
-- compose gives them. `ledger migrate` then finds them and grants them what each may do.
\set writer `echo "$LEDGER_WRITER_PASSWORD"`
\set reader `echo "$LEDGER_READER_PASSWORD"`
\set auditor `echo "$LEDGER_AUDITOR_PASSWORD"`
\set projector `echo "$LEDGER_PROJECTOR_PASSWORD"`
CREATE ROLE ledger_writer LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD :'writer';
CREATE ROLE ledger_reader LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD :'reader';
CREATE ROLE ledger_auditor LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD :'auditor';
CREATE ROLE ledger_projector LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD :'projector';
