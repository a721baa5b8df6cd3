import Foundation
import LedgerCore
import LedgerLog
import LedgerDomain
import LedgerPostgres
import Logging
import Synchronization

/// The fold state shared with the scan callback (which runs on the connection's own thread).
final class FoldBox: Sendable {
    let state: Mutex<Projections>
    init(_ p: Projections) { state = Mutex(p) }
    func apply(_ scanned: ScannedFact) { state.withLock { $0.apply(scanned) } }
    var value: Projections { state.withLock { $0 } }
}

extension Projections {
    /// Applies a stored fact; one that does not decode becomes an anomaly and the fold goes on.
    mutating func apply(_ scanned: consuming ScannedFact) {
        let ctx = FactContext(position: scanned.position, occurredAt: scanned.occurredAt)
        let type = scanned.type
        switch scanned.takeFact() {
        case .success(let fact): apply(fact, ctx)
        case .failure(let error): skip(ctx, type: type, reason: error.description)
        }
    }
}

/// Progress of a long fold: events done out of the total, for a progress bar.
public typealias FoldProgress = @Sendable (_ done: Int64, _ total: Int64) -> Void

extension LogReplay {
    /// The advisory lock that lets one projector (or rebuild) write the read models.
    var projectorLockKey: String { "ledger-projector:" + configuration.schema }

    func takeProjectorLock(_ conn: PostgresConnection) async throws {
        let got = try await conn.query("SELECT pg_try_advisory_lock(hashtext($1))", [.text(projectorLockKey)])
        if got.bool(0, 0) != true {
            let holder = try? await conn.query(
                """
                SELECT l.pid FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted
                  AND l.objid = (hashtext($1)::bigint & 4294967295)::oid LIMIT 1
                """, [.text(projectorLockKey)])
            throw ProjectorBusy(holderPID: holder.flatMap { $0.count > 0 ? $0.int64(0, 0).map(Int32.init) : nil })
        }
    }

    /// Releases the projector lock and closes `conn`. The lock is released by a statement, not left
    /// to the server's end of the session, which comes a moment after the close: a projector or
    /// rebuild started right after this one would otherwise find the lock still held.
    func closeReleasingProjectorLock(_ conn: PostgresConnection) async {
        _ = try? await conn.query("SELECT pg_advisory_unlock_all()")
        await conn.close()
    }

    /// The position of the last event recorded at or before `time` (the log as it stood then). A
    /// hot standby that has not replayed up to `time` cannot know what was recorded by then: it is
    /// refused with ``PositionNotReached``, like a position beyond the head.
    public func position(asOf time: Timestamp) async throws -> Int64 {
        let standby = try await standbyState()
        if standby.isStandby, standby.lastReplayedAt.map({ $0 < time }) ?? true {
            throw PositionNotReached(
                requested: "the log as of \(time.iso8601)", head: try await headPosition(), standby: standby)
        }
        let s = quoteIdentifier(configuration.schema)
        let r = try await pool.withConnection { conn in
            try await conn.query(
                "SELECT coalesce(max(position), 0) FROM \(s).events WHERE recorded_at <= $1",
                [.timestamptz(microsecondsSince1970: time.microseconds)])
        }
        return r.int64(0, 0) ?? 0
    }

    /// Folds the log after `state`'s position through `through` (streamed, bounded memory):
    /// reading, decoding and folding on three threads (``FoldPipeline``), in log order.
    public func fold(
        _ initial: Projections = Projections(), through: Int64, progress: FoldProgress? = nil
    ) async throws -> Projections {
        guard through > initial.position else { return initial }
        return try await Self.piped(initial, total: through - initial.position, progress: progress) { add in
            try await scanRows(after: initial.position, through: through, add)
        }.0
    }

    /// The fold of what `scan` reads: `scan` hands each batch of rows to the function it is given
    /// (on the connection's thread); a thread of its own decodes them and another folds them, in order.
    /// `total` is for progress. The pipeline is finished whether the scan succeeds or throws.
    static func piped<R>(
        _ initial: Projections, total: Int64, progress: FoldProgress?,
        _ scan: (_ add: @escaping @Sendable (ScannedRows) -> Void) async throws -> R
    ) async throws -> (Projections, R) {
        let counter = Atomic<Int64>(0)
        let pipeline = FoldPipeline(initial)
        let scanned: R
        do {
            scanned = try await scan { rows in
                pipeline.add(rows)
                let n = counter.add(Int64(rows.count), ordering: .relaxed).newValue
                // Progress about every 16,384 rows.
                if n >> 14 != (n - Int64(rows.count)) >> 14 { progress?(n, total) }
            }
        } catch {
            _ = await pipeline.finish()
            throw error
        }
        let folded = await pipeline.finish()
        progress?(counter.load(ordering: .relaxed), total)
        return (folded, scanned)
    }

    /// The same fold on one thread (decode and fold in turn): what the pipeline must equal.
    func foldInline(_ initial: Projections = Projections(), through: Int64) async throws -> Projections {
        let box = FoldBox(initial)
        guard through > initial.position else { return initial }
        try await scanFacts(after: initial.position, through: through) { box.apply($0) }
        return box.value
    }

    /// The checkpoint of each read model (0 when it never ran).
    public func checkpoints() async throws -> [ReadModel: Int64] {
        let s = quoteIdentifier(configuration.schema)
        let r = try await pool.withConnection { conn in
            try await conn.query("SELECT projection, position FROM \(s).projection_checkpoints")
        }
        var out: [ReadModel: Int64] = [:]
        for m in ReadModel.allCases { out[m] = 0 }
        for i in 0..<r.count {
            if let name = r.string(i, 0), let m = ReadModel(rawValue: name) { out[m] = r.int64(i, 1) ?? 0 }
        }
        return out
    }
}

/// Keeps the read models current: folds the log and writes each batch's changed rows together with
/// the checkpoint in one transaction, so after a crash it resumes exactly where the tables are.
/// One instance per ledger (advisory lock).
public actor Projector {
    let store: EventStore
    let connection: PostgresConnection
    let logger: Logger
    var state: Projections
    var checkpoints: [ReadModel: Int64] = [:]
    var anomaliesWritten = 0
    /// Set when a batch failed to commit: the fold is then ahead of the tables, so this projector
    /// refuses to go on (a new one restores its state from the tables).
    var failure: String?
    public private(set) var position: Int64 = 0

    /// The snapshot this projector started from (nil: it folded the log from the first event).
    public nonisolated let startedFrom: SnapshotInfo?
    /// A snapshot is written after this many facts were folded since the last one (0: never).
    let snapshotEvery: Int64
    /// The position of the latest snapshot this projector wrote or started from.
    var snapshotAt: Int64
    /// The fold's memory limit (for compacting its spill file).
    let memory: FoldMemory
    /// What the spill file's views needed when it was last measured (at start, or when it was
    /// compacted or found not worth compacting): it is measured again once the file holds twice
    /// that, and more than ``FoldMemory/compactionSlack`` beyond.
    var spillMeasured: Int64 = 0
    /// Spill files compacted (diagnostics, tests).
    private(set) var compactions = 0
    /// The spill file's size at each compaction that failed (diagnostics, tests): each more than
    /// twice the one before.
    private(set) var failedCompactionSizes: [Int64] = []

    /// Takes the projector lock (failing with ``ProjectorBusy`` if another holds it) and restores
    /// the fold state up to the oldest checkpoint: from the latest snapshot at or before it that
    /// this build can read (see ``SnapshotInfo``), folding only the facts after it, or from the
    /// first event. After folding `snapshotEvery` facts or more (from the start, or as it
    /// follows), it writes a snapshot for the next start; with 0 it writes none (and still starts from one).
    ///
    /// Its fold keeps its views within `memory` (``FoldMemory``), read from a snapshot or folded.
    public static func start(
        _ store: EventStore, logger: Logger = Logger(label: "ledger"), progress: FoldProgress? = nil,
        snapshotEvery: Int64 = 1_000_000, memory: FoldMemory = .automatic
    ) async throws -> Projector {
        let conn = try await PostgresConnection.connect(
            store.configuration.connectionString, applicationName: "ledger-projector", logger: logger)
        do {
            try await LogReplay(store).takeProjectorLock(conn)
            let cps = try await LogReplay(store).checkpoints()
            let low = cps.values.min() ?? 0
            let schema = store.configuration.schema
            let snapshot: (state: Projections, info: SnapshotInfo)?
            do {
                snapshot =
                    low == 0
                    ? nil
                    : try await conn.withIsolation { conn in
                        try SnapshotStore.latest(
                            atOrBefore: low, schema: schema, memory: memory,
                            skipped: { position, why in
                                logger.warning(
                                    "projector: not starting from the snapshot at position \(position): \(why)")
                            }, on: conn)
                    }
            } catch let error as PostgresError where error.sqlState == .undefinedTable {
                logger.warning(
                    "projector: no snapshot table (run `ledger migrate`); folding the log",
                    metadata: ["error": "\(error.message)"])
                snapshot = nil
            }
            let initial = try snapshot?.state ?? memory.emptyState().0
            var state = try await LogReplay(store).fold(initial, through: low, progress: progress)
            state.tracksChanges = true
            let projector = Projector(
                store: store, connection: conn, logger: logger, state: state, checkpoints: cps,
                startedFrom: snapshot?.info, snapshotEvery: snapshotEvery, memory: memory)
            await projector.snapshotIfDue()
            return projector
        } catch {
            await LogReplay(store).closeReleasingProjectorLock(conn)
            throw error
        }
    }

    init(
        store: EventStore, connection: PostgresConnection, logger: Logger, state: Projections,
        checkpoints: [ReadModel: Int64],
        startedFrom: SnapshotInfo?, snapshotEvery: Int64, memory: FoldMemory
    ) {
        self.store = store
        self.connection = connection
        self.logger = logger
        self.state = state
        self.checkpoints = checkpoints
        self.startedFrom = startedFrom
        self.snapshotEvery = snapshotEvery
        self.snapshotAt = startedFrom?.position ?? 0
        self.memory = memory
        self.spillMeasured = state.spilledBytes
        self.position = state.position
        // Anomalies up to the oldest checkpoint are in the table already.
        self.anomaliesWritten = state.anomalies.count
    }

    public func close() async {
        await LogReplay(store).closeReleasingProjectorLock(connection)
    }

    /// Applies every event appended so far; returns how many were applied.
    @discardableResult
    public func catchUp(batchSize: Int = 5000) async throws -> Int64 {
        if let failure {
            throw ProjectorFailed(
                description:
                    "an earlier batch failed to commit (\(failure)); its facts are in this projector's memory but not in the tables: start a new projector, which resumes from the tables"
            )
        }
        var applied: Int64 = 0
        while true {
            // While some read models are ahead of others (after a partial rebuild), go one event
            // at a time up to the highest checkpoint so that no model is written twice for a fact.
            // A batch may not cross a position where some model's checkpoint sits: the models
            // behind it must be written for the facts after it, and only those.
            let next = checkpoints.values.filter { $0 > position }.min()
            let limit = next.map { Int(min(Int64(batchSize), $0 - position)) } ?? batchSize
            let page = try await store.readAll(after: position, limit: limit)
            if page.isEmpty { return applied }
            for event in page { state.apply(ScannedFact(event)) }
            let upto = page.last!.position
            do {
                try await flush(upto: upto)
            } catch {
                failure = "\(error)"
                throw error
            }
            position = upto
            applied += Int64(page.count)
            await snapshotIfDue()
            compactIfDue()
        }
    }

    /// Compacts the fold's spill file (``FoldMemory/compacted(_:)``) once it holds more than twice
    /// what its views need, and ``FoldMemory/compactionSlack`` more. Checked after each batch (its
    /// rows committed, so the state has no changes waiting); measuring what the views need goes
    /// through every spilled view, so it is done only when the file has doubled since it was last
    /// measured. A compaction that fails is logged, and the projector goes on with the old file;
    /// it tries again once that file has doubled, not at every batch.
    func compactIfDue() {
        guard let size = state.spillStoreSize, size > 2 * spillMeasured + memory.compactionSlack else { return }
        let needed = state.spilledBytes
        guard size > 2 * needed + memory.compactionSlack else {
            spillMeasured = needed
            return
        }
        let start = ContinuousClock.now
        do {
            state = try memory.compacted(state)
            spillMeasured = state.spilledBytes
            compactions += 1
            logger.info(
                "projector: compacted the fold's spill file",
                metadata: [
                    "bytes": "\(size)", "needed": "\(needed)", "now": "\(state.spillStoreSize ?? 0)",
                    "seconds": "\((ContinuousClock.now - start).seconds)",
                ])
        } catch {
            spillMeasured = size
            failedCompactionSizes.append(size)
            logger.warning(
                "projector: could not compact the fold's spill file; going on with it (is there room in the spill directory, --spill-directory or TMPDIR?)",
                metadata: ["error": "\(error)"])
        }
    }

    /// Writes a snapshot of the fold when `snapshotEvery` facts or more were folded since the last.
    /// A snapshot is a cache: failing to write one is logged, and the projector goes on (it tries
    /// again after as many facts more).
    func snapshotIfDue() async {
        guard snapshotEvery > 0, state.position - snapshotAt >= snapshotEvery else { return }
        let (state, schema) = (self.state, store.configuration.schema)
        let start = ContinuousClock.now
        snapshotAt = state.position
        do {
            if let info = try await connection.withIsolation({ conn in
                try SnapshotStore.write(state, schema: schema, on: conn)
            }) {
                logger.info(
                    "projector: wrote a snapshot of the fold",
                    metadata: [
                        "position": "\(info.position)", "bytes": "\(info.bytes)",
                        "seconds": "\((ContinuousClock.now - start).seconds)",
                    ])
            }
        } catch {
            logger.warning(
                "projector: could not write a snapshot of the fold; going on without", metadata: ["error": "\(error)"])
        }
    }

    /// Catches up, then keeps tailing until the task is cancelled: wakes on the log's NOTIFY and
    /// polls every `pollInterval` as a fallback (the same signal a subscription waits on).
    public func follow(
        pollInterval: Duration = .seconds(1), onBatch: @Sendable (Int64, Int64) -> Void = { _, _ in }
    ) async throws {
        let signal = AppendSignal(store: store, pollInterval: pollInterval)
        do {
            while !Task.isCancelled {
                await signal.arm()
                let n = try await catchUp()
                if n > 0 {
                    onBatch(n, position)
                    continue
                }
                try await signal.wait()
            }
        } catch is CancellationError {
        } catch {
            await signal.close()
            throw error
        }
        await signal.close()
    }

    func flush(upto: Int64) async throws {
        let changes = state.takeChanges()
        let behind = ReadModel.allCases.filter { (checkpoints[$0] ?? 0) < upto }
        if behind.isEmpty { return }
        let snapshot = state
        let schema = quoteIdentifier(store.configuration.schema)
        let newAnomalies = Array(snapshot.anomalies[min(anomaliesWritten, snapshot.anomalies.count)...])
        try await connection.withIsolation { conn in
            try conn.transaction { conn in
                for model in behind {
                    try ReadModelWriter.write(
                        model, changes: changes, newAnomalies: newAnomalies, from: snapshot, schema: schema, on: conn)
                    _ = try conn.query(
                        """
                        INSERT INTO \(schema).projection_checkpoints (projection, position) VALUES ($1, $2)
                        ON CONFLICT (projection) DO UPDATE SET position = EXCLUDED.position, updated_at = clock_timestamp()
                        """, [.text(model.rawValue), .int8(upto)], prepared: true)
                }
            }
        }
        anomaliesWritten = snapshot.anomalies.count
        for m in behind { checkpoints[m] = upto }
    }
}
