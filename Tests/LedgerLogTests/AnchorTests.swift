import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerLog
import LedgerTesting
import Testing

/// Anchors kept outside the database catch what an owner can do and the chain alone cannot show.
@Suite("Anchors", .timeLimit(.minutes(2)))
struct AnchorTests {
    /// As the owner, triggers off: recompute every hash from `position` on with the database's
    /// own chain function and move the head to the end: the chain verifies again.
    static func rechain(from position: Int64, _ admin: PostgresConnection, _ schema: String) async throws {
        try await admin.execute(
            """
            SET search_path TO \(quoteIdentifier(schema));
            SET session_replication_role = replica;
            DO $$
            DECLARE e events; prev bytea; last timestamptz;
            BEGIN
                SELECT coalesce((SELECT hash FROM events WHERE position = \(position) - 1), decode(repeat('00', 32), 'hex')) INTO prev;
                FOR e IN SELECT * FROM events WHERE position >= \(position) ORDER BY position LOOP
                    UPDATE events SET hash = chain_hash(prev, e) WHERE position = e.position RETURNING hash, recorded_at INTO prev, last;
                END LOOP;
                UPDATE log_head SET last_position = (SELECT max(position) FROM events), last_hash = prev;
            END
            $$;
            SET session_replication_role = origin;
            RESET search_path;
            """)
    }

    static func tenEvents(_ store: EventStore) async throws {
        _ = try await store.append(
            (0..<10).map { testEvent(stream: "s\($0 % 3)", payload: .makeObject([("amount", .int(Int64($0) * 100))])) })
    }

    @Test func anAnchorHoldsWhileTheLogGrows() async throws {
        try await TestDatabase.withSchema("anchorok") { owner in
            let store = try await EventStore.open(owner.connecting(as: .writer))
            defer { Task { await store.close() } }
            let empty = try await store.anchor()
            #expect(empty.position == 0)
            try await Self.tenEvents(store)
            let anchor = try await store.anchor()
            #expect(anchor.position == 10)
            #expect(anchor.hash == (try await store.readAll(after: 9).first?.hash.hexString))
            #expect(try Anchor.parse(anchor.json.compactText) == anchor)
            _ = try await store.append([testEvent(stream: "s9")])
            let checks = try await store.check([empty, anchor])
            #expect(checks.allSatisfy { $0.holds }, "\(checks.map(\.problem))")
            #expect(try await store.verifyChain().lastHash.hexString != anchor.hash)
        }
    }

    @Test func aTruncatedTailWithTheHeadMovedBackIsCaught() async throws {
        try await TestDatabase.withSchema("anchortail") { owner in
            let store = try await EventStore.open(owner.connecting(as: .writer))
            defer { Task { await store.close() } }
            try await Self.tenEvents(store)
            let anchor = try await store.anchor()
            try await TestDatabase.cutTail(owner, keeping: 7)
            #expect(try await store.verifyChain().isIntact, "the chain alone cannot see it")
            let check = try #require(try await store.check([anchor]).first)
            #expect(!check.holds)
            #expect(check.problem?.contains("removed") == true)
        }
    }

    @Test func aRewriteRechainedToTheHeadIsCaught() async throws {
        try await TestDatabase.withSchema("anchorrechain") { owner in
            let store = try await EventStore.open(owner.connecting(as: .writer))
            defer { Task { await store.close() } }
            try await Self.tenEvents(store)
            _ = try await store.append([testEvent(stream: "s0")])
            let before = try #require(try await store.readAll(after: 2, limit: 1).first)
            let early = Anchor(
                schema: owner.schema, position: 3, hash: before.hash.hexString, recordedAt: before.recordedAt)
            let anchor = try await store.anchor()
            let admin = try await TestDatabase.admin(owner)
            defer { Task { await admin.close() } }
            try await TestDatabase.tamper(
                owner,
                "UPDATE \(quoteIdentifier(owner.schema)).events SET payload = jsonb_set(payload, '{amount}', '1') WHERE position = 4"
            )
            #expect(!(try await store.verifyChain().isIntact))
            try await Self.rechain(from: 4, admin, owner.schema)
            #expect(try await store.verifyChain().isIntact, "re-chained: the chain alone cannot see it")
            let checks = try await store.check([anchor, early])
            #expect(!checks[0].holds)
            #expect(checks[0].problem?.contains("rewritten") == true)
            #expect(checks[1].holds, "an anchor before the rewrite still holds")
        }
    }

    @Test func aRowInsertedInsideTheLogIsCaught() async throws {
        try await TestDatabase.withSchema("anchorinsert") { owner in
            let store = try await EventStore.open(owner.connecting(as: .writer))
            defer { Task { await store.close() } }
            try await Self.tenEvents(store)
            let anchor = try await store.anchor()
            let admin = try await TestDatabase.admin(owner)
            defer { Task { await admin.close() } }
            // Shift positions 5... up by one, insert a row at 5, re-chain from there.
            let s = quoteIdentifier(owner.schema)
            try await TestDatabase.tamper(
                owner,
                """
                UPDATE \(s).events SET position = position + 1000000 WHERE position >= 5;
                UPDATE \(s).events SET position = position - 1000000 + 1 WHERE position > 1000000;
                INSERT INTO \(s).events (position, event_id, stream_id, stream_version, event_type, schema_version, payload,
                                         occurred_at, recorded_at, hash)
                SELECT 5, gen_random_uuid(), 'inserted', 0, 'Refunded', 1, '{"amount": 5}', occurred_at, recorded_at, hash
                FROM \(s).events WHERE position = 4
                """)
            try await Self.rechain(from: 5, admin, owner.schema)
            #expect(try await store.verifyChain().isIntact, "re-chained: the chain alone cannot see it")
            #expect(try await store.headPosition() == 11)
            let check = try #require(try await store.check([anchor]).first)
            #expect(!check.holds)
        }
    }

    @Test func malformedAnchorsAreRefusedWithTheReason() {
        for (text, reason) in [
            ("nope", "not JSON"), ("{}", "not a ledger anchor"),
            (#"{"anchor":"ledger-anchor/1","schema":"s","position":3,"hash":"abc"}"#, "hex hash"),
            (#"{"anchor":"ledger-anchor/1","schema":"s","hash":"abc"}"#, "position"),
        ] {
            #expect { try Anchor.parse(text) } throws: { ($0 as? AnchorError)?.description.contains(reason) == true }
        }
    }
}
