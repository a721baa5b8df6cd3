import Foundation
import LedgerCore
import LedgerTesting
import Testing

/// `ledger append --batch-size N`: the input read a chunk at a time, validated whole, appended in
/// atomic batches; a failed batch leaves the ones before it, and the same command appends the rest.
@Suite("ledger append --batch-size", .timeLimit(.minutes(2)))
struct BatchedAppendTests {
    /// A fact outside the catalogue (appended with --allow-unknown-types) on a stream of its own.
    /// `expectedVersion` is written as it is (`"no-stream"` with its quotes, `0` without).
    static func opsLine(_ n: Int, expectedVersion: String? = nil) -> String {
        let expected = expectedVersion.map { #","expectedVersion":\#($0)"# } ?? ""
        return
            #"{"eventId":"0b7e3f1a-2c4d-4e5f-8a9b-0000000000f\#(n)","stream":"ops:z","type":"OpsNote","payload":{"n":\#(n)},"occurredAt":"2026-01-01T00:00:00Z"\#(expected)}"#
    }

    @Test func batchesPrintWhatOneBatchPrints() async throws {
        try await TestDatabase.withSchema("clibatchone") { one in
            try await TestDatabase.withSchema("clibatched") { batched in
                let whole = try await CLI(url: one.connectionString, schema: one.schema).run(["append"], stdin: sample)
                #expect(whole.status == 0, "\(whole.stderr)")
                let cli = CLI(url: batched.connectionString, schema: batched.schema)
                let inBatches = try await cli.run(["append", "--batch-size", "3"], stdin: sample)
                #expect(inBatches.status == 0, "\(inBatches.stderr)")
                #expect(lines(inBatches.stdout).count == 10)
                #expect(inBatches.stdout == whole.stdout)
                #expect(inBatches.stderr.contains("appended 10 events, 0 already stored (batches of 3)"))

                let file = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-batch-\(UUID()).jsonl")
                try sample.write(to: file, atomically: true, encoding: .utf8)
                defer { try? FileManager.default.removeItem(at: file) }
                let again = try await cli.run(["append", "--batch-size", "4", "--file", file.path])
                #expect(again.status == 0, "\(again.stderr)")
                #expect(lines(again.stdout).count == 10)
                #expect(lines(again.stdout).allSatisfy { $0.contains(#""alreadyStored":true"#) })

                let verify = try await cli.run(["verify-chain"])
                #expect(verify.stdout.contains(#""intact":true,"verified":10"#), "\(verify.stdout)")
            }
        }
    }

    /// The whole input is validated before the first batch: a bad last line writes nothing.
    @Test func aBadLineAfterManyBatchesWritesNothing() async throws {
        try await TestDatabase.withSchema("clibatchbad") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            let input = sample + #"{"stream":"s","type":"OrderCreated","payload":{"a":1,}}"# + "\n"
            let r = try await cli.run(["append", "--batch-size", "2"], stdin: input)
            #expect(r.status == 65)
            #expect(r.stderr.contains("line 11, column"), "\(r.stderr)")
            #expect(r.stdout.isEmpty)
            #expect(try await cli.run(["read"]).stdout.isEmpty)
        }
    }

    /// A line that would get a made-up id is refused: appended again after a failed batch, it
    /// would be a second fact.
    @Test func aLineWithNeitherIdNorKeyIsRefused() async throws {
        try await TestDatabase.withSchema("clibatchnoid") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            let anonymous = #"{"stream":"ops:y","type":"OpsNote","payload":{},"occurredAt":"2026-01-01T00:00:00Z"}"#
            let keyed =
                #"{"stream":"ops:k","type":"OpsNote","payload":{},"occurredAt":"2026-01-01T00:00:00Z","idempotencyKey":"ops:k:1"}"#
            let refused = try await cli.run(
                ["append", "--batch-size", "5", "--allow-unknown-types"], stdin: keyed + "\n" + anonymous + "\n")
            #expect(refused.status == 65)
            #expect(refused.stderr.contains("line 2, field eventId"), "\(refused.stderr)")
            #expect(try await cli.run(["read"]).stdout.isEmpty)
            // A key alone is enough: the same line appended again is found by its key.
            for _ in 0..<2 {
                let r = try await cli.run(["append", "--batch-size", "5", "--allow-unknown-types"], stdin: keyed)
                #expect(r.status == 0, "\(r.stderr)")
            }
            #expect(lines(try await cli.run(["read"]).stdout).count == 1)
        }
    }

    @Test func aFailedBatchLeavesTheOnesBeforeItAndTheSameCommandAppendsTheRest() async throws {
        try await TestDatabase.withSchema("clibatchresume") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            let first = try await cli.run(["append", "--allow-unknown-types"], stdin: Self.opsLine(0))
            #expect(first.status == 0, "\(first.stderr)")
            let s = lines(sample)
            // Lines 1-2, then line 3 expects ops:z to have no stream (it has one): its batch fails.
            let conflicting = [s[0], s[1], Self.opsLine(1, expectedVersion: #""no-stream""#), s[2], s[3]]
            let failed = try await cli.run(
                ["append", "--batch-size", "2", "--allow-unknown-types"],
                stdin: conflicting.joined(separator: "\n") + "\n")
            #expect(failed.status == 2, "\(failed.stderr)")
            #expect(failed.stderr.contains("lines 1-2 are stored (2 events)"), "\(failed.stderr)")
            #expect(failed.stderr.contains("the batch of lines 3-4 failed"), "\(failed.stderr)")
            #expect(failed.stderr.contains("error: line 3: version conflict"), "\(failed.stderr)")
            // One event id on lines 1 and 5 with different content, blank lines between: line 5 is at fault.
            let twice = [
                Self.opsLine(7), "", Self.opsLine(8), "",
                Self.opsLine(7).replacingOccurrences(of: #""n":7"#, with: #""n":9"#),
            ]
            let dup = try await cli.run(
                ["append", "--batch-size", "10", "--allow-unknown-types"], stdin: twice.joined(separator: "\n") + "\n")
            #expect(dup.status == 2 && dup.stderr.contains("error: line 5: idempotency conflict"), "\(dup.stderr)")
            // Three copies (two of them the same): which one is at fault is not told, never guessed.
            let thrice = [
                Self.opsLine(6), Self.opsLine(6), "",
                Self.opsLine(6).replacingOccurrences(of: #""n":6"#, with: #""n":5"#),
            ]
            let three = try await cli.run(
                ["append", "--batch-size", "10", "--allow-unknown-types"], stdin: thrice.joined(separator: "\n") + "\n")
            #expect(three.status == 2 && three.stderr.contains("error: idempotency conflict"), "\(three.stderr)")
            #expect(lines(failed.stdout).count == 2)
            #expect(lines(try await cli.run(["read"]).stdout).count == 3)

            // The line mended, the same command: lines 1-2 come back stored, the rest is appended.
            let mended = [s[0], s[1], Self.opsLine(1, expectedVersion: "0"), s[2], s[3]]
            let rest = try await cli.run(
                ["append", "--batch-size", "2", "--allow-unknown-types"], stdin: mended.joined(separator: "\n"))
            #expect(rest.status == 0, "\(rest.stderr)")
            let out = lines(rest.stdout)
            #expect(out.count == 5)
            #expect(out.prefix(2).allSatisfy { $0.contains(#""alreadyStored":true"#) })
            #expect(out.dropFirst(2).allSatisfy { $0.contains(#""alreadyStored":false"#) })
            #expect(rest.stderr.contains("appended 3 events, 2 already stored"))
            let verify = try await cli.run(["verify-chain"])
            #expect(verify.stdout.contains(#""intact":true,"verified":6"#), "\(verify.stdout)")
        }
    }
}
