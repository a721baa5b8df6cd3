import Dispatch
import LedgerCore
import LedgerDomain
import LedgerLog
import LedgerPostgres
import Synchronization

/// The projector's snapshots of its fold (`projector_snapshots`, migration 0014): the fold of the
/// log through a position, so that a projector starts from the latest one and folds only what
/// came after, instead of the whole log.
///
/// A snapshot is read only if it was written by this build's declarations of the fold
/// (``Projections/snapshotVersion``), the event at its position still has the hash it had (the
/// chain through it is the same log), and its bytes have their SHA-256. Anything else is passed
/// over, and the fold starts from an older snapshot or from the first event.
public struct SnapshotInfo: Sendable, Hashable {
    public var position: Int64
    public var bytes: Int
}

enum SnapshotStore {
    /// About the largest part of a snapshot in one row (a view is never split): a reader holds a
    /// few parts at a time. A projector started from a 10 M-fact snapshot kept to `--fold-memory
    /// 32MiB` peaked at 297-298 MiB with parts of 16 MiB and at 188-220 MiB with parts of 4 MiB, in
    /// the same time; without a limit, 3.9-4.2 s either way.
    static let partBytes = 4 << 20

    /// The latest snapshot at or before `position` that passes every check, read back; nil when
    /// there is none. `skipped` is told about each snapshot passed over, and why. Each part is
    /// decoded as it arrives, so only a few parts' bytes are held at a time.
    /// With a `memory` limit, the views are put into tables that spill as the parts come.
    static func latest(
        atOrBefore position: Int64, schema: String, memory: FoldMemory = .unlimited, skipped: (Int64, String) -> Void,
        on conn: isolated PostgresConnection
    ) throws -> (state: Projections, info: SnapshotInfo)? {
        let s = quoteIdentifier(schema)
        let candidates = try conn.query(
            """
            SELECT p.position, p.parts, p.version, p.log_hash = e.hash
            FROM \(s).projector_snapshots p LEFT JOIN \(s).events e ON e.position = p.position
            WHERE p.part = 0 AND p.position <= $1
            ORDER BY p.position DESC
            """, [.int8(position)])
        for row in 0..<candidates.count {
            guard let at = candidates.int64(row, 0), let parts = candidates.int64(row, 1),
                let version = candidates.int64(row, 2)
            else { continue }
            guard version == Int64(Projections.snapshotVersion) else {
                skipped(
                    at,
                    "written by another version of the fold (\(version), this build reads \(Projections.snapshotVersion))"
                )
                continue
            }
            guard candidates.string(row, 3) == "t" else {
                skipped(at, "the event at its position is not the one it was taken after (the log differs)")
                continue
            }
            do {
                // Part by part, in binary (a part as hex text would be twice its size, then
                // decoded). Parts are checked and decoded on both cores while the connection
                // fetches the next, at most four handed over and not yet put together.
                let digests = try conn.query(
                    "SELECT digest FROM \(s).projector_snapshots WHERE position = $1 ORDER BY part", [.int8(at)])
                guard digests.count == parts else { throw SnapshotDamaged() }
                let decoding = PartDecoder(try memory.snapshotReader())
                var total = 0
                for part in 0..<parts {
                    decoding.room.wait()
                    var bytes: [UInt8] = []
                    guard
                        try conn.appendBinaryValue(
                            "SELECT bytes FROM \(s).projector_snapshots WHERE position = $1 AND part = $2",
                            [.int8(at), .int4(Int32(part))], to: &bytes),
                        let digest = digests.bytea(Int(part), 0)
                    else {
                        decoding.room.signal()
                        _ = try? decoding.finish()
                        throw SnapshotDamaged()
                    }
                    total += bytes.count
                    decoding.add(bytes, digest: digest)
                }
                return (try decoding.finish(), SnapshotInfo(position: at, bytes: total))
            } catch is SnapshotDamaged {
                skipped(at, "its parts are missing or damaged")
            } catch let error as DecodingError {
                skipped(at, "it does not read back (\(error))")
            }
        }
        return nil
    }

    struct SnapshotDamaged: Error {}

    /// Checks and decodes the parts of one snapshot on both cores (several parts at once), and
    /// puts them together in order on a queue of its own.
    final class PartDecoder: Sendable {
        /// One part being decoded: its result once there.
        private final class Slot: Sendable {
            let done = DispatchSemaphore(value: 0)
            let result = Mutex<Result<SnapshotReader.DecodedPart, any Error>?>(nil)
        }

        private let merging = DispatchQueue(label: "ledger-snapshot-merge")
        /// Parts handed over and not put together yet (each about ``partBytes``, with its views).
        /// Kept to 32 MiB, a projector started from a 10 M-fact snapshot in parts of 4 MiB took
        /// 5.2-5.4 s and peaked at 200-220 MiB with four, 5.5-5.6 s and 188-189 MiB with two.
        let room = DispatchSemaphore(value: 4)
        private let state: Mutex<(reader: SnapshotReader, error: (any Error)?)>
        private let keepingBytes: Bool

        init(_ reader: SnapshotReader) {
            keepingBytes = reader.keepsBytes
            state = Mutex((reader, nil))
        }

        func add(_ bytes: [UInt8], digest: [UInt8]) {
            let slot = Slot()
            DispatchQueue.global().async { [keepingBytes] in
                let result = Result<SnapshotReader.DecodedPart, any Error> {
                    guard SHA256.hash(bytes) == digest else { throw SnapshotDamaged() }
                    return try SnapshotReader.decode(bytes, keepingBytes: keepingBytes)
                }
                slot.result.withLock { $0 = result }
                slot.done.signal()
            }
            // Parts are put together in the order they were handed over: this queue is serial.
            merging.async { [self] in
                defer { room.signal() }
                slot.done.wait()
                let result = slot.result.withLock { r in
                    defer { r = nil }
                    return r!
                }
                state.withLock { s in
                    guard s.error == nil else { return }
                    do { try s.reader.add(result.get()) } catch { s.error = error }
                }
            }
        }

        /// Waits for the parts handed over, then the state they hold (or the first error).
        func finish() throws -> Projections {
            merging.sync {}
            // Moved out, so that nothing else holds the state the projector goes on changing.
            var reader = try state.withLock { s in
                if let error = s.error { throw error }
                defer { s.reader = SnapshotReader() }
                return s.reader
            }
            return try reader.finish()
        }
    }

    /// Writes a snapshot of `state` (through its position), part by part as the state is encoded,
    /// and removes every older one, in one transaction.
    @discardableResult
    static func write(
        _ state: Projections, schema: String, partBytes: Int = partBytes, on conn: isolated PostgresConnection
    ) throws -> SnapshotInfo? {
        guard state.position > 0 else { return nil }
        let s = quoteIdentifier(schema)
        return try conn.transaction { conn in
            guard
                let hash = try conn.query("SELECT hash FROM \(s).events WHERE position = $1", [.int8(state.position)])
                    .bytea(0, 0)
            else {
                throw LedgerError.migration(
                    "no event at position \(state.position), where the fold is: the log was cut back after the fold read it; no snapshot written (rebuild the read models)"
                )
            }
            _ = try conn.query("DELETE FROM \(s).projector_snapshots")
            var parts: Int32 = 0
            var total = 0
            try state.writeSnapshot(partBytes: partBytes) { bytes in
                _ = try conn.query(
                    """
                    INSERT INTO \(s).projector_snapshots (position, part, parts, version, log_hash, digest, bytes)
                    VALUES ($1, $2, 0, $3, $4, $5, $6)
                    """,
                    [
                        .int8(state.position), .int4(parts), .int4(Int32(Projections.snapshotVersion)),
                        .bytea(hash), .bytea(SHA256.hash(bytes)), .bytea(bytes),
                    ])
                parts += 1
                total += bytes.count
            }
            _ = try conn.query(
                "UPDATE \(s).projector_snapshots SET parts = $1 WHERE position = $2",
                [.int4(parts), .int8(state.position)])
            return SnapshotInfo(position: state.position, bytes: total)
        }
    }
}
