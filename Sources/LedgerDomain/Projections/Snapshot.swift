import LedgerCore

extension Projections {
    /// Which declarations of the fold's state a snapshot was written with. Raise it whenever a
    /// view, the state or what a fold keeps in it changes: a snapshot of another version is never
    /// read (the projector folds the log instead). `SnapshotTests` pins the bytes the release
    /// scenarios give, so such a change fails a test until this is raised and the pin updated.
    public static let snapshotVersion = 1

    /// The fold's state as bytes (``BinaryCoding``): what ``init(snapshot:)`` reads back to go on
    /// folding after ``position`` as if it had folded the log up to there. Changes being tracked
    /// are not part of it. Equal states give equal bytes.
    public func snapshot() throws -> [UInt8] { try snapshot(fields: true) }

    /// With `fields` false, every view by its `Codable` conformance (the reference the views' own
    /// ``BinaryFields`` are tested against).
    func snapshot(fields: Bool) throws -> [UInt8] {
        try BinaryCoding.encode(self, fields: fields)
    }

    /// The state a ``snapshot()`` was taken of (written with ``snapshotVersion``).
    public init(snapshot bytes: [UInt8], tracksChanges: Bool = false) throws {
        try self.init(snapshot: bytes, fields: true, tracksChanges: tracksChanges)
    }

    init(snapshot bytes: [UInt8], fields: Bool, tracksChanges: Bool = false) throws {
        self = try BinaryCoding.decode(Projections.self, from: bytes, fields: fields)
        self.tracksChanges = tracksChanges
    }

    /// The fold's state in parts of about `partBytes` each (a view is never split), handed to
    /// `emit` in order: what a ``SnapshotReader`` reads back part by part, so that neither side
    /// holds the whole snapshot. The first part holds everything but the views (a ``snapshot()``
    /// of the rest); each other part, a run of views of one kind. Equal states give equal parts.
    public func writeSnapshot(partBytes: Int, _ emit: ([UInt8]) throws -> Void) throws {
        var rest = self
        rest.orders = ViewTable()
        rest.transactions = ViewTable()
        rest.subscriptions = ViewTable()
        rest.users = ViewTable()
        try emit([SnapshotPart.rest.rawValue] + rest.snapshot())
        let w = BinaryWriter()
        func views<V: BinaryFields>(_ kind: SnapshotPart, _ table: ViewTable<V>) throws {
            for (key, view) in table {
                if w.count == 0 { w.byte(kind.rawValue) }
                w.string(key)
                view.write(binary: w)
                if w.count >= partBytes { try emit(w.take()) }
            }
            if w.count > 0 { try emit(w.take()) }
        }
        try views(.orders, orders)
        try views(.transactions, transactions)
        try views(.subscriptions, subscriptions)
        try views(.users, users)
    }
}

/// What a part of a snapshot holds (its first byte).
enum SnapshotPart: UInt8 {
    case rest = 0, orders, transactions, subscriptions, users
}

/// Reads back the parts ``Projections/writeSnapshot(partBytes:_:)`` wrote, one at a time, in order.
public struct SnapshotReader: Sendable {
    private var state: Projections?

    public init() {}

    public mutating func add(_ part: [UInt8]) throws {
        guard let first = part.first, let kind = SnapshotPart(rawValue: first) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "a snapshot part of unknown kind"))
        }
        if kind == .rest {
            guard state == nil else { throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "a second first part")) }
            state = try Projections(snapshot: Array(part.dropFirst()))
            return
        }
        guard var s = state else { throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "views before the first part")) }
        state = nil
        try BinaryCoding.read(part, from: 1) { r in
            func add<V: BinaryFields>(_ table: inout ViewTable<V>) throws {
                while !r.isAtEnd {
                    let key = try r.string()
                    guard table.add(key, try V(binary: r)) else { throw r.invalid("the view \(key) twice") }
                }
            }
            switch kind {
            case .rest: break
            case .orders: try add(&s.orders)
            case .transactions: try add(&s.transactions)
            case .subscriptions: try add(&s.subscriptions)
            case .users: try add(&s.users)
            }
        }
        state = s
    }

    /// The state the parts hold.
    public func finish(tracksChanges: Bool = false) throws -> Projections {
        guard var s = state else { throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "no first part")) }
        s.tracksChanges = tracksChanges
        return s
    }
}
