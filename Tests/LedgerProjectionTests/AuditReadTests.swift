import Foundation
import LedgerCore
import LedgerDomain
import LedgerLog
import LedgerPostgres
@testable import LedgerProjection
import LedgerScenarios
import LedgerTesting
import Testing

/// The audit reads the log once (binary COPY): each row is hashed onto the chain from its stored
/// fields and its fact folded. It must agree with `verify-chain` (which decodes whole events, from
/// text COPY) on every row, whatever its text holds, and with the fold's own read on every finding.
@Suite("Audit's one read", .timeLimit(.minutes(3)))
struct AuditReadTests {
    /// Text that COPY escapes (tab, newline, carriage return, backslash) and text it does not.
    static let awkward = ["tab\there", "line\nbreak", "cr\rx", "back\\slash", "ünï©ødé 支付", "plain"]

    static func events() -> [NewEvent] {
        (0..<24).map { i in
            let text = awkward[i % awkward.count]
            let meta = EventMetadata(correlationId: i % 2 == 0 ? text : nil, source: "audit-read")
            return NewEvent(
                stream: "s-\(i % 4)", type: i % 5 == 0 ? "Unknown\(i)" : "PaymentVerified",
                payload: .makeObject([("note", .string(text)), ("n", .int(Int64(i)))]), metadata: meta,
                occurredAt: Timestamp(microsecondsSince1970: 1_774_944_900_000_000 + Int64(i) * 1_234_567),
                idempotencyKey: i % 3 == 0 ? nil : "key\\\(i)-支付")
        }
    }

    static func tamper(_ admin: PostgresConnection, _ schema: String, _ set: String, at position: Int) async throws {
        try await admin.execute(
            """
            SET session_replication_role = replica;
            UPDATE \(quoteIdentifier(schema)).events SET \(set) WHERE position = \(position);
            SET session_replication_role = origin;
            """)
    }

    /// The 24 events appended, then `sql` run by the owner in the ledger's schema with triggers
    /// off (as a superuser could), then `body` with the store.
    static func afterTheOwner(_ label: String, runs sql: String, _ body: (EventStore) async throws -> Void) async throws
    {
        try await TestDatabase.withSchema(label) { config in
            let store = try await EventStore.open(config)
            defer { Task { await store.close() } }
            _ = try await store.append(Self.events())
            let admin = try await TestDatabase.admin(config)
            defer { Task { await admin.close() } }
            try await admin.execute(
                """
                SET search_path TO \(quoteIdentifier(config.schema));
                SET session_replication_role = replica;
                \(sql)
                SET session_replication_role = origin;
                RESET search_path;
                """)
            try await body(store)
        }
    }

    /// An event stored past the head (added by the owner without moving it, its hash chained):
    /// verify-chain and the audit as of now both report it, at that position.
    @Test func anEventPastTheHeadBreaksTheChainForBoth() async throws {
        try await Self.afterTheOwner(
            "auditbeyond",
            runs: """
                DO $$
                DECLARE e events; prev bytea;
                BEGIN
                    SELECT hash INTO prev FROM events WHERE position = 24;
                    INSERT INTO event_claims (event_id, stream_id, stream_version) VALUES ('00000000-0000-4000-8000-000000000025', 'extra', 0);
                    INSERT INTO events (position, event_id, stream_id, stream_version, event_type, schema_version, payload, metadata,
                                        occurred_at, recorded_at, hash)
                    SELECT 25, '00000000-0000-4000-8000-000000000025', 'extra', 0, event_type, schema_version, payload, metadata,
                           occurred_at, recorded_at, hash FROM events WHERE position = 24;
                    SELECT * INTO e FROM events WHERE position = 25;
                    UPDATE events SET hash = chain_hash(prev, e) WHERE position = 25;
                END $$;
                """
        ) { store in
            let verified = try await store.verifyChain()
            #expect(
                verified.firstBrokenPosition == 25 && verified.problem?.contains("past the head") == true, "\(verified)"
            )
            let run = try await LogReplay(store).audit()
            let broken = run.findings.filter { $0.kind == .chainBroken }
            #expect(broken.map(\.positions) == [[25]], "the audit missed what verify-chain rejects: \(broken)")
        }
    }

    /// Values the append path refuses (an occurredAt before 1970: negative microseconds), written
    /// by the owner and re-chained with the database's own chain function: both readers rebuild the
    /// same canonical bytes as PostgreSQL and find the chain intact.
    @Test func rowsRechainedByTheDatabaseVerifyWhateverTheirValues() async throws {
        try await Self.afterTheOwner(
            "auditvalues",
            runs: """
                UPDATE events SET occurred_at = '1969-12-30 23:59:59.999999+00' WHERE position = 7;
                UPDATE events SET occurred_at = '1900-01-01 00:00:00.000001+00' WHERE position = 8;
                DO $$
                DECLARE e events; prev bytea;
                BEGIN
                    SELECT hash INTO prev FROM events WHERE position = 6;
                    FOR e IN SELECT * FROM events WHERE position >= 7 ORDER BY position LOOP
                        UPDATE events SET hash = chain_hash(prev, e) WHERE position = e.position RETURNING hash INTO prev;
                    END LOOP;
                    UPDATE log_head SET last_hash = prev;
                END
                $$;
                """
        ) { store in
            let chain = try await store.verifyChain()
            #expect(chain.isIntact, "\(chain.problem ?? "")")
            let run = try await LogReplay(store).audit()
            #expect(
                !run.findings.contains { $0.kind == .chainBroken }, "\(run.findings.filter { $0.kind == .chainBroken })"
            )
        }
    }

    @Test func oneReadAgreesWithVerifyChainAndTheFold() async throws {
        try await TestDatabase.withSchema("auditread") { config in
            let store = try await EventStore.open(config)
            defer { Task { await store.close() } }
            _ = try await store.append(Self.events())
            let head = try await store.headPosition()

            // Intact: the same head hash, no chain finding, and the fold's findings.
            let run = try await LogReplay(store).audit()
            let chain = try await store.verifyChain()
            #expect(chain.isIntact && run.position == head && run.events == head)
            #expect(run.headHash == chain.lastHash)
            #expect(!run.findings.contains { $0.kind == .chainBroken })
            let folded = try await LogReplay(store).fold(through: head)
            #expect(run.findings.map(\.key) == Audit.run(folded, options: AuditOptions()).map(\.key))
            let partial = try await LogReplay(store).audit(through: head - 5)
            #expect(partial.position == head - 5 && !partial.findings.contains { $0.kind == .chainBroken })

            // Each column the chain covers, changed behind the triggers' back, later positions first:
            // the audit names the same first broken position as verify-chain every time.
            let admin = try await TestDatabase.admin(config)
            defer { Task { await admin.close() } }
            let changes = [
                (23, "metadata = '{\"source\": \"x\"}'"), (20, "idempotency_key = 'key-other'"),
                (17, "idempotency_key = NULL"),
                (14, "payload = jsonb_set(payload, '{note}', '\"tab\\there too\"')"),
                (11, "stream_version = stream_version + 1000"),
                (8, "recorded_at = recorded_at + interval '1 microsecond'"),
                (5, "occurred_at = occurred_at - interval '1 second'"),
                (3, "event_type = 'PaymentRefunded'"),
            ]
            for (position, set) in changes {
                try await Self.tamper(admin, config.schema, set, at: position)
                let report = try await store.verifyChain()
                let broken = try await LogReplay(store).audit().findings.filter { $0.kind == .chainBroken }
                #expect(report.firstBrokenPosition == Int64(position), "\(set)")
                #expect(broken.count == 1 && broken.first?.positions == [report.firstBrokenPosition ?? -1], "\(set)")
            }
        }
    }
}
