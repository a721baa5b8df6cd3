import Foundation
import LedgerCore
import LedgerPostgres

/// The candidate append path of `tools/append-design/` driven from one process, as the library or
/// the HTTP service would drive it: each writer appends one fact a transaction (`append_fact`, one
/// row, no global lock) on a connection of its own, and one sealer connection in the same process
/// runs the sealer's rounds (`seal_round`). With ``Answer/position``, a writer waits after its
/// commit until a round has sealed its fact and the sealer hands it the position (no polling: the
/// sealer runs a round as soon as a writer waits, and again while any writer still waits), which is
/// what an append answers today.
///
/// This measures a design, not the ledger: the schema must hold the candidate's tables and functions
/// (`tools/bench-append-design.sh` makes it).
public enum SealerWorkload {
    public enum Answer: String, Sendable, CaseIterable {
        /// The writer is answered at its commit (event id and version); the sealer loops beside it.
        case commit
        /// The writer is answered when a round has sealed its fact, with its position.
        case position
        /// As ``position``, but the writer commits without waiting for its commit to reach the disk
        /// (`synchronous_commit` off): the round's commit comes later in the WAL, so its flush makes
        /// the writer's fact durable too, and the writer is answered only after it. One flush a
        /// round instead of one a writer and one a round. (A fact lost in a crash before the round
        /// was never answered: its writer asks again.)
        case positionAsync = "position-async"
    }

    public struct Result: Sendable {
        public var measurement: AppendWorkload.Measurement
        /// The sealer's rounds in the run.
        public var rounds: Int
        /// Positions handed to writers (when they wait for them): every one distinct, checked.
        public var positions: Int
        /// Facts committed but not sealed yet when the writers stopped: a sealer that falls behind
        /// its writers (answered at commit) leaves them for later, and its rate cannot last.
        public var backlog: Int64
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs `writers` writers for `seconds` (or until each has appended `appendsPerWriter`) on the
    /// schema `schema` of `url`, then drains the sealer.
    public static func run(
        url: String, schema: String, writers: Int, seconds: Double, appendsPerWriter: Int? = nil, answer: Answer
    ) async throws -> Result {
        let settings = ["search_path": schema]
        let sealer = Sealer(
            connection: try await PostgresConnection.connect(
                url, applicationName: "ledger-bench-sealer", settings: settings))
        guard try await sealer.holdsTheCandidate() else {
            await sealer.close()
            throw Failure(
                description:
                    "schema \(schema) does not hold the candidate append path (a facts table and seal_round()): tools/bench-append-design.sh makes one"
            )
        }
        var connections: [PostgresConnection] = []
        let writerSettings =
            answer == .positionAsync ? settings.merging(["synchronous_commit": "off"]) { $1 } : settings
        for _ in 0..<writers {
            connections.append(
                try await PostgresConnection.connect(
                    url, applicationName: "ledger-bench-writer", settings: writerSettings))
        }
        let beside = answer == .commit ? Task { try await sealer.loopBeside() } : nil
        let start = ContinuousClock.now
        let end = start + .milliseconds(Int(seconds * 1000))
        let tag = UUID().uuidString.prefix(8).lowercased()
        let perWriter = try await withThrowingTaskGroup(of: ([Double], [Int64]).self) { group in
            for (w, connection) in connections.enumerated() {
                group.addTask {
                    try await write(
                        on: connection, stream: "sealer-\(tag)-\(w)", until: end, count: appendsPerWriter ?? .max,
                        sealer: answer == .commit ? nil : sealer)
                }
            }
            var all: [([Double], [Int64])] = []
            for try await r in group { all.append(r) }
            return all
        }
        let elapsed = (ContinuousClock.now - start).seconds
        let backlog = try await sealer.unsealed()
        await sealer.stopBeside()
        try await beside?.value
        try await sealer.drain()
        for c in connections { await c.close() }
        await sealer.close()
        let positions = perWriter.flatMap(\.1)
        guard Set(positions).count == positions.count, !positions.contains(where: { $0 <= 0 }) else {
            throw Failure(description: "the sealer handed out a position twice, or one that is not positive")
        }
        return Result(
            measurement: AppendWorkload.Measurement(
                events: perWriter.reduce(0) { $0 + $1.0.count }, elapsed: elapsed, latencies: perWriter.flatMap(\.0)),
            rounds: await sealer.rounds, positions: positions.count, backlog: backlog)
    }

    /// One writer's appends until `end`: a new stream version each (its own stream), an idempotency
    /// key, a small payload; with a sealer, waits for each fact's position.
    private static func write(
        on connection: PostgresConnection, stream: String, until end: ContinuousClock.Instant, count: Int,
        sealer: Sealer?
    ) async throws -> ([Double], [Int64]) {
        var latencies: [Double] = []
        var positions: [Int64] = []
        var version: Int64 = -1
        while ContinuousClock.now < end, latencies.count < count {
            let id = UUID.systemRandom().uuidString.lowercased()
            let began = ContinuousClock.now
            let r = try await connection.query(
                "SELECT stream_version FROM append_fact($1::uuid, $2, 'CoinsSpent', $3::jsonb, now(), $4, $5)",
                [
                    .text(id), .text(stream), .jsonb(#"{"spendId":"\#(id)","userId":"\#(stream)","amount":1}"#),
                    .text("\(stream):\(version + 1)"), .int8(version),
                ], prepared: true)
            guard r.int64(0, 0) == version + 1 else {
                throw Failure(
                    description: "append_fact gave \(stream) version \(r.string(0, 0) ?? "none"), not \(version + 1)")
            }
            version += 1
            if let sealer { positions.append(try await sealer.position(of: id)) }
            latencies.append((ContinuousClock.now - began).seconds)
        }
        return (latencies, positions)
    }

    /// The sealer of one process: runs rounds on its own connection, and answers the writers that
    /// wait for their facts' positions.
    actor Sealer {
        private let connection: PostgresConnection
        private var waiting: [String: CheckedContinuation<Int64, any Error>] = [:]
        private var running = false
        private var besideRuns = true
        private(set) var rounds = 0

        init(connection: PostgresConnection) { self.connection = connection }

        func close() async { await connection.close() }

        func holdsTheCandidate() async throws -> Bool {
            try await connection.query(
                "SELECT to_regclass('facts') IS NOT NULL AND to_regprocedure('seal_round()') IS NOT NULL"
            ).bool(0, 0) == true
        }

        /// The position of the committed fact `id`, once a round has sealed it.
        func position(of id: String) async throws -> Int64 {
            try await withCheckedThrowingContinuation { continuation in
                waiting[id] = continuation
                if !running {
                    running = true
                    Task { await self.answerWaiting() }
                }
            }
        }

        /// Rounds while any writer waits. A round seals every fact whose writer has finished and reads
        /// the waiting facts' positions, in one round trip and one transaction.
        private func answerWaiting() async {
            while !waiting.isEmpty {
                let ids = Array(waiting.keys)
                do {
                    let results = try await connection.pipeline([
                        Statement("SELECT seal_round()"),
                        Statement(
                            "SELECT event_id::text, position FROM sealed_log WHERE event_id = ANY($1::uuid[])",
                            [.uuidArray(ids)]),
                    ])
                    rounds += 1
                    var answered = 0
                    for r in 0..<results[1].count {
                        if let id = results[1].string(r, 0), let p = results[1].int64(r, 1),
                            let continuation = waiting.removeValue(forKey: id)
                        {
                            continuation.resume(returning: p)
                            answered += 1
                        }
                    }
                    // Nothing sealed for them yet: an older writer has not finished. Not a busy loop.
                    if answered == 0 { try? await Task.sleep(for: .microseconds(200)) }
                } catch {
                    for continuation in waiting.values { continuation.resume(throwing: error) }
                    waiting = [:]
                }
            }
            running = false
        }

        /// Rounds every millisecond until ``stopBeside()``, for writers answered at their commit
        /// (as `tools/bench-append-design.sh`'s pgbench sealer does). A round that fails ends the
        /// loop, and its error is the run's.
        func loopBeside() async throws {
            while besideRuns {
                _ = try await connection.query("SELECT seal_round()")
                rounds += 1
                try await Task.sleep(for: .milliseconds(1))
            }
        }

        func stopBeside() { besideRuns = false }

        /// Facts committed and not sealed yet.
        func unsealed() async throws -> Int64 {
            try await connection.query("SELECT (SELECT count(*) FROM facts) - (SELECT count(*) FROM sealed_log)")
                .int64(0, 0) ?? 0
        }

        /// Rounds until every fact is sealed.
        func drain() async throws {
            for _ in 0..<1000 {
                if try await unsealed() == 0 { return }
                _ = try await connection.query("SELECT seal_round()")
                try await Task.sleep(for: .milliseconds(10))
            }
            throw Failure(
                description:
                    "facts still unsealed after 1,000 rounds: a transaction left open in the cluster holds the sealer's horizon back (see pg_stat_activity's backend_xid); end it and run again"
            )
        }
    }
}
