import Foundation
import LedgerCore
import LedgerPostgres
import LedgerTesting
import Testing

/// What `ledger` says when input or settings are wrong: escaped, bounded, and naming the real cause.
@Suite("ledger messages", .timeLimit(.minutes(2)))
struct MessagesCLITests {
    static func line(type: String = "Refunded", id: Int = 1, key: String? = nil, extra: String = "") -> String {
        let k = key.map { #","idempotencyKey":\#(JSONValue.string($0).compactText)"# } ?? ""
        return
            #"{"eventId":"0b7e3f1a-2c4d-4e5f-8a9b-\#(String(format: "%012d", id))","stream":"s","type":\#(JSONValue.string(type).compactText),"payload":{},"occurredAt":"2026-03-31T08:15:00Z"\#(k)\#(extra)}"#
    }

    @Test func anEscapeSequenceAndAForgedLineInInputAreEscaped() async throws {
        try await TestDatabase.withSchema("climsgesc") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            let r = try await cli.run(
                ["append"], stdin: Self.line(type: "Refunded\u{1B}[31m\nledger: appended 999 events") + "\n")
            #expect(r.status == 65)
            #expect(!r.stderr.contains("\u{1B}"))
            #expect(!lines(r.stderr).contains { $0.hasPrefix("ledger: appended") }, "\(r.stderr)")
        }
    }

    @Test func aMegabyteValueGivesALineNotAMegabyte() async throws {
        try await TestDatabase.withSchema("climsglong") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            let big = String(repeating: "K", count: 1_000_000)
            // As an unknown field's name, a metadata field's name, a payload field's name and a type.
            for extra in [#","\#(big)":1"#, #","metadata":{"\#(big)":"x"}"#] {
                let r = try await cli.run(["append"], stdin: Self.line(extra: extra) + "\n")
                #expect(r.status == 65)
                #expect(r.stderr.utf8.count < 4_000, "stderr is \(r.stderr.utf8.count) bytes")
            }
            let payload = Self.line().replacingOccurrences(of: #""payload":{}"#, with: #""payload":{"\#(big)":1}"#)
            for input in [payload, Self.line(type: big)] {
                let r = try await cli.run(["append"], stdin: input + "\n")
                #expect(r.status == 65)
                #expect(r.stderr.utf8.count < 4_000, "stderr is \(r.stderr.utf8.count) bytes")
            }
        }
    }

    @Test func aDecimalSchemaVersionIsNotTalkedAboutAsMoney() async throws {
        try await TestDatabase.withSchema("climsgver") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            let r = try await cli.run(["append"], stdin: Self.line(extra: #","schemaVersion":1.0"#) + "\n")
            #expect(r.status == 65)
            #expect(r.stderr.contains("integer"))
            #expect(!r.stderr.contains("amount") && !r.stderr.contains("minor units"), "\(r.stderr)")
        }
    }

    @Test func aBadPayloadLimitIsRefusedNotIgnored() async throws {
        try await TestDatabase.withSchema("climsgenv") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            let r = try await cli.run(
                ["append"], stdin: Self.line() + "\n", environment: ["LEDGER_MAX_PAYLOAD_BYTES": "abc"])
            #expect(r.status == 78)
            #expect(r.stderr.contains("LEDGER_MAX_PAYLOAD_BYTES"))
            #expect(try await TestDatabase.storedEventRows(config) == 0, "nothing was written")
        }
    }

    @Test func aMissingFileSaysWhyAndExits65() async throws {
        let r = try await CLI(url: "", schema: "").run(
            ["append", "--file", "/nonexistent/facts.jsonl"], withConnection: false)
        #expect(r.status == 65)
        #expect(r.stderr.contains("No such file"), "\(r.stderr)")
    }

    @Test func aKeyRepeatedInOneBatchIsNotSaidToBeStoredAtPositionZero() async throws {
        try await TestDatabase.withSchema("climsgdup") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            let a = Self.line(type: "Refunded", id: 1, key: "same")
            let b = Self.line(type: "RefundDeclined", id: 2, key: "same")
            let r = try await cli.run(["append", "--allow-unknown-types"], stdin: a + "\n" + b + "\n")
            #expect(r.status == 2 || r.status == 65, "\(r.stderr)")
            #expect(!r.stderr.contains("position 0"), "\(r.stderr)")
        }
    }

    @Test func aStoredRowFromTheYear294000IsReportedNotACrash() async throws {
        try await TestDatabase.withSchema("climsgyear") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            #expect(try await cli.run(["append"], stdin: sample).status == 0)
            let admin = try await TestDatabase.admin(config)
            defer { Task { await admin.close() } }
            try await admin.execute(
                """
                SET session_replication_role = replica;
                UPDATE \(quoteIdentifier(config.schema)).events SET recorded_at = '294000-01-01 00:00:00+00' WHERE position = 3;
                SET session_replication_role = origin;
                """)
            let verify = try await cli.run(["verify-chain"])
            #expect(verify.status == 1, "\(verify.stderr)")
            #expect(verify.stdout.contains(#""firstBrokenPosition":3"#))
            let audit = try await cli.run(["audit", "--format", "json"])
            #expect(audit.status != 70, "\(audit.stderr)")
            #expect(audit.stdout.contains("chain-broken"))
        }
    }
}
