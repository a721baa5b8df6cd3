import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerLog
import LedgerTesting
import Testing

@Suite("Log integrity", .timeLimit(.minutes(2)))
struct LogIntegrityTests {
    @Test func updateDeleteAndTruncateAreRefused() async throws {
        try await TestDatabase.withSchema("appendonly") { config in
            let store = try await EventStore.open(config)
            defer { Task { await store.close() } }
            _ = try await store.append([testEvent(stream: "s"), testEvent(stream: "s")])
            let admin = try await TestDatabase.admin(config)
            defer { Task { await admin.close() } }
            let s = quoteIdentifier(config.schema)
            for sql in [
                "UPDATE \(s).events SET event_type = 'Refunded'", "DELETE FROM \(s).events", "TRUNCATE \(s).events",
                "DELETE FROM \(s).log_head", "UPDATE \(s).log_head SET last_position = 0",
            ] {
                await #expect {
                    try await admin.execute(sql)
                } throws: { error in
                    guard let e = error as? PostgresError else { return false }
                    return e.sqlState == "42501" || e.sqlState == "23514"
                }
            }
            #expect(try await store.headPosition() == 2)
        }
    }

    @Test func writerRoleMaySelectAndInsertOnly() async throws {
        try await TestDatabase.withSchema("roles") { config in
            let store = try await EventStore.open(config)
            defer { Task { await store.close() } }
            _ = try await store.append([testEvent(stream: "s")])
            let admin = try await TestDatabase.admin(config)
            defer { Task { await admin.close() } }
            let s = quoteIdentifier(config.schema)
            try await admin.execute("SET ROLE ledger_writer")
            #expect(try await admin.query("SELECT count(*) FROM \(s).events").int64(0, 0) == 1)
            await #expect {
                try await admin.execute("ALTER TABLE \(s).events DISABLE TRIGGER USER")
            } throws: { ($0 as? PostgresError)?.sqlState == "42501" }
            await #expect {
                try await admin.execute("UPDATE \(s).events SET event_type = 'X'")
            } throws: { ($0 as? PostgresError)?.sqlState == "42501" }
            try await admin.execute("RESET ROLE")
        }
    }

    /// The writer may insert claims (the append path does), but never a claim without its event:
    /// one alone would hold the fact's id, key and stream version with nothing to compare a later
    /// append with, and every append of that fact would fail.
    @Test func aClaimWithoutItsEventIsRefusedAndTheFactStillAppends() async throws {
        try await TestDatabase.withSchema("claimjam") { config in
            let store = try await EventStore.open(config)
            defer { Task { await store.close() } }
            let admin = try await TestDatabase.admin(config)
            defer { Task { await admin.close() } }
            let s = quoteIdentifier(config.schema)
            let event = testEvent(stream: "order:jam", key: "order:jam:created")
            try await admin.execute("SET ROLE ledger_writer")
            await #expect {
                try await admin.query(
                    "INSERT INTO \(s).event_claims (event_id, idempotency_key, stream_id, stream_version) VALUES ($1::uuid, $2, $3, 0)",
                    [.text(event.eventId.lowercased), .text("order:jam:created"), .text("order:jam")])
            } throws: { ($0 as? PostgresError)?.constraint == "event_claims_have_events" }
            try await admin.execute("RESET ROLE")
            let appended = try await store.append([event])
            #expect(appended.map(\.position) == [1] && appended.allSatisfy { !$0.alreadyStored })
        }
    }

    @Test func databaseConstraintsRefuseGapsAndVersionHoles() async throws {
        try await TestDatabase.withSchema("constraints") { config in
            let store = try await EventStore.open(config)
            defer { Task { await store.close() } }
            _ = try await store.append([testEvent(stream: "s")])
            let admin = try await TestDatabase.admin(config)
            defer { Task { await admin.close() } }
            let s = quoteIdentifier(config.schema)
            let insert = { (position: Int, version: Int) in
                // Claimed in the same statement, as every event must be (`events_claimed`).
                """
                WITH claim AS (INSERT INTO \(s).event_claims (event_id, stream_id, stream_version)
                               VALUES (gen_random_uuid(), 's', \(version)) RETURNING event_id)
                INSERT INTO \(s).events (position, event_id, stream_id, stream_version, event_type, schema_version, payload,
                                         occurred_at, recorded_at, hash)
                SELECT \(position), claim.event_id, 's', \(version), 'X', 1, '{}', now(), now(), decode(repeat('00', 32), 'hex') FROM claim
                """
            }
            // A position gap (3 without 2), a version hole (2 without 1), a duplicate version.
            for (sql, state) in [
                (insert(3, 1), SQLState.foreignKeyViolation), (insert(2, 2), .foreignKeyViolation),
                (insert(2, 0), .uniqueViolation),
            ] {
                await #expect {
                    try await admin.execute(sql)
                } throws: { ($0 as? PostgresError)?.sqlState == state }
            }
        }
    }

    @Test func verifyChainNamesTheTamperedPosition() async throws {
        try await TestDatabase.withSchema("tamper") { config in
            let store = try await EventStore.open(config)
            defer { Task { await store.close() } }
            _ = try await store.append(
                (0..<10).map {
                    testEvent(stream: "s\($0 % 3)", payload: .makeObject([("amount", .int(Int64($0) * 100))]))
                })
            #expect(try await store.verifyChain().isIntact)
            let admin = try await TestDatabase.admin(config)
            defer { Task { await admin.close() } }
            let s = quoteIdentifier(config.schema)
            // A superuser bypasses the triggers and rewrites an amount.
            try await admin.execute(
                """
                SET session_replication_role = replica;
                UPDATE \(s).events SET payload = jsonb_set(payload, '{amount}', '1') WHERE position = 7;
                SET session_replication_role = origin;
                """)
            let report = try await store.verifyChain()
            #expect(!report.isIntact)
            #expect(report.firstBrokenPosition == 7)
            #expect(report.problem?.contains("position 7") == true)
        }
    }

    @Test func verifyChainNoticesRemovedEvents() async throws {
        try await TestDatabase.withSchema("removed") { config in
            let store = try await EventStore.open(config)
            defer { Task { await store.close() } }
            _ = try await store.append((0..<5).map { _ in testEvent(stream: "s") })
            let admin = try await TestDatabase.admin(config)
            defer { Task { await admin.close() } }
            let s = quoteIdentifier(config.schema)
            try await admin.execute(
                """
                SET session_replication_role = replica;
                DELETE FROM \(s).events WHERE position = 5;
                SET session_replication_role = origin;
                """)
            let report = try await store.verifyChain()
            #expect(!report.isIntact)
            #expect(report.problem?.contains("head") == true)
        }
    }

    @Test func canonicalTextEqualsPostgresJsonbText() async throws {
        try await TestDatabase.withSchema("canonical", migrate: false) { config in
            let conn = try await TestDatabase.admin(config)
            defer { Task { await conn.close() } }
            var rng = SplitMix64(seed: 42)
            for _ in 0..<300 {
                let value = randomJSON(&rng, depth: 0)
                let text = value.canonicalText
                let pg = try await conn.query("SELECT $1::jsonb::text", [.text(value.compactText)]).string(0, 0)
                #expect(pg == text, "compact input: \(value.compactText)")
                #expect(try JSONValue.parse(text) == value)
            }
        }
    }

    @Test func unreachableDatabaseErrorRedactsThePassword() async throws {
        await #expect {
            _ = try await PostgresConnection.connect(
                "postgresql://ledger:s3cret-pw@127.0.0.1:1/ledger?connect_timeout=2")
        } throws: { error in
            guard let e = error as? PostgresError else { return false }
            return e.kind == .connection && !e.description.contains("s3cret-pw") && e.description.contains("***")
        }
        #expect(ConnectionString.redacted("host=db password='a b' user=x") == "host=db password=*** user=x")
        #expect(
            ConnectionString.redacted("postgresql://u:p%40ss@h:5/db?password=zz&sslmode=require")
                == "postgresql://u:***@h:5/db?password=***&sslmode=require")
    }
}

func randomString(_ rng: inout SplitMix64) -> String {
    let alphabet: [String] = [
        "a", "b", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{1}", "\u{1f}", "é", "中", "😀", "\u{7f}", "key",
        "amount",
    ]
    return (0..<rng.below(6)).map { _ in alphabet[rng.below(alphabet.count)] }.joined()
}

func randomJSON(_ rng: inout SplitMix64, depth: Int) -> JSONValue {
    switch depth > 3 ? rng.below(4) : rng.below(6) {
    case 0: return .null
    case 1: return .bool(rng.below(2) == 0)
    case 2: return .int([Int64.min, Int64.max, 0, -1, 600, Int64(rng.below(1_000_000))][rng.below(6)])
    case 3: return .string(randomString(&rng))
    case 4: return .array((0..<rng.below(4)).map { _ in randomJSON(&rng, depth: depth + 1) })
    default:
        return .makeObject((0..<rng.below(5)).map { _ in (randomString(&rng), randomJSON(&rng, depth: depth + 1)) })
    }
}
