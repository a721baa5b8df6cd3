import Dispatch
import LedgerCore
import LedgerFoldStore
import Synchronization

extension Projections {
    /// Which declarations of the fold's state a snapshot was written with. Raise it whenever a view, the state or
    /// what a fold keeps in it changes: a snapshot of another version is never read (the projector folds the log
    /// instead). `SnapshotTests` pins the bytes the release scenarios give, so such a change fails a test until
    /// this is raised and the pin updated. 3: each view's fields preceded by their length (``ViewRecord``). 4:
    /// money's exact rest below a minor unit; subscriptions' lifecycle; notifications not yet translated. 9:
    /// subscriptions' owners over time and every grace; the store's own times of voids and revocations; renewals
    /// that take their terms from their subscription. 11: Google's obfuscated account id; each period's owner.
    /// 12: a renewal signed with another token than its original's is not its subscription's.
    public static let snapshotVersion = 12

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
        precondition(keepsUserPositions, "a fold without users' positions (an audit's) is not a projector's state")
        var rest = self
        rest.orders = ViewTable()
        rest.transactions = ViewTable()
        rest.subscriptions = ViewTable()
        rest.users = ViewTable()
        try emit([SnapshotPart.rest.rawValue] + rest.snapshot())
        let w = BinaryWriter()
        func views<V: BinaryFields>(_ kind: SnapshotPart, _ table: ViewTable<V>) throws {
            // In place (iterating the table would copy each view out first), and a spilled view
            // as the bytes it was spilled as.
            try table.forEachRecord { write in
                if w.count == 0 { w.byte(kind.rawValue) }
                write(w)
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

/// Reads back the parts ``Projections/writeSnapshot(partBytes:_:)`` wrote: each part decodes on
/// its own (``decode(_:)``, on any thread, several at once), ``add(_:)-(DecodedPart)`` takes them in
/// order, and ``finish(tracksChanges:)`` puts each table together, the four at once.
public struct SnapshotReader: Sendable {
    private var state: Projections?
    private var orders: [([String], [OrderView])] = []
    private var transactions: [([String], [TransactionView])] = []
    private var subscriptions: [([String], [SubscriptionView])] = []
    private var users: [([String], [UserView])] = []
    /// When set, the views go into tables that spill (``Projections/spillViews(to:memory:pageSize:)``)
    /// part by part as they come, in order, instead of being held until ``finish(tracksChanges:)``.
    private let spill: Spill?
    /// For tables that spill: the views read and not yet added, by kind (see ``Held``).
    private var heldOrders = Held(), heldTransactions = Held(), heldSubscriptions = Held(), heldUsers = Held()

    /// The newest views read for a table that spills, not added yet, as their keys and bytes:
    /// whether they stay in memory depends on how many follow. Once more are held than the table
    /// keeps in memory (or than ``pagesDecodedAtStart`` pages), the oldest page of them goes straight
    /// to the spill store as the bytes the snapshot holds (``ViewTable/addSpilled(keys:bytes:)``):
    /// none of its views is decoded, nor encoded again. What is held when the views of that kind
    /// end is decoded and added as views, and stays in memory. (Decoding every view, then
    /// encoding it again for the spill file, took most of a limited projector's start.) A view
    /// added as bytes is decoded only when the fold needs it: what vouches for its bytes at start
    /// is the part's SHA-256, which the projector checks before a part is decoded; a spilled view
    /// that does not decode stops the process, as any spilled view that does not read back.
    private struct Held: Sendable {
        var keys: [String] = []
        /// Each view's ``ViewRecord`` in its part.
        var bytes: [ArraySlice<UInt8>] = []
    }

    /// How many pages of each kind's newest views a reader that spills decodes at start, at
    /// most: the others go to the spill store as their bytes, however much memory the limit
    /// leaves, and are decoded when the fold first needs them (a spilled view read back stays in
    /// memory while the table's recall room lasts). With a large limit (the default, a quarter
    /// of the machine's memory), decoding every view of a 10 M-fact snapshot took 7.7-8.6 s and
    /// 1.8 GiB; its bytes, a few seconds and a tenth of that. The newest views, the likeliest
    /// to change next, stay decoded.
    static let pagesDecodedAtStart = 4

    /// Whether parts for this reader are decoded keeping their bytes (``decode(_:keepingBytes:)``).
    public var keepsBytes: Bool { spill != nil }

    private struct Spill: Sendable {
        let store: any SpillStore
        let memory: Int
        let pageSize: Int
    }

    public init() { spill = nil }

    /// A reader whose state keeps to `memory` bytes of views, spilling the rest to `store`: the
    /// snapshot is never held whole (a reader without a limit holds every view until it finishes).
    public init(spillingTo store: any SpillStore, memory: Int, pageSize: Int = ViewTable<OrderView>.defaultPageSize) {
        spill = Spill(store: store, memory: memory, pageSize: pageSize)
    }

    /// One part's contents, decoded (for a reader that ``keepsBytes``, the keys only, with the
    /// part's bytes).
    public struct DecodedPart: Sendable {
        fileprivate enum Contents: Sendable {
            case rest(Projections)
            case orders([String], [OrderView])
            case transactions([String], [TransactionView])
            case subscriptions([String], [SubscriptionView])
            case users([String], [UserView])
        }
        fileprivate let contents: Contents
        /// The part's bytes and where each view in it ends (the first starts after the kind's
        /// byte), when decoded keeping them.
        fileprivate var bytes: (part: [UInt8], ends: [Int])?
    }

    /// Decodes one part by itself; `keepingBytes` (for a reader that ``keepsBytes``) decodes only
    /// the keys and keeps the part's bytes, from which the views that stay in memory are decoded
    /// and those that spill are written as they are.
    public static func decode(_ part: [UInt8], keepingBytes: Bool = false) throws -> DecodedPart {
        guard let first = part.first, let kind = SnapshotPart(rawValue: first) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: [], debugDescription: "a snapshot part of unknown kind"))
        }
        if kind == .rest { return DecodedPart(contents: .rest(try Projections(snapshot: Array(part.dropFirst())))) }
        var ends: [Int] = []
        var decoded = try BinaryCoding.read(part, from: 1) { r in
            func views<V: BinaryFields>(_: V.Type) throws -> ([String], [V]) {
                var keys: [String] = [], values: [V] = []
                while !r.isAtEnd {
                    if keepingBytes {
                        keys.append(try ViewRecord.key(r))
                        ends.append(r.bytesRead)
                    } else {
                        // As ``ViewRecord/read(_:)`` does, each view decoded in place in the array.
                        keys.append(try r.string())
                        let end = try r.beginSized()
                        values.append(try V(binary: r))
                        try r.endSized(end)
                    }
                }
                return (keys, values)
            }
            switch kind {
            case .rest: preconditionFailure("read above")
            case .orders:
                let (k, v) = try views(OrderView.self)
                return DecodedPart(contents: .orders(k, v))
            case .transactions:
                let (k, v) = try views(TransactionView.self)
                return DecodedPart(contents: .transactions(k, v))
            case .subscriptions:
                let (k, v) = try views(SubscriptionView.self)
                return DecodedPart(contents: .subscriptions(k, v))
            case .users:
                let (k, v) = try views(UserView.self)
                return DecodedPart(contents: .users(k, v))
            }
        }
        if keepingBytes { decoded.bytes = (part, ends) }
        return decoded
    }

    /// Decodes the next part and adds it.
    public mutating func add(_ part: [UInt8]) throws {
        try add(Self.decode(part, keepingBytes: keepsBytes))
    }

    /// Adds the next part, decoded: the first part first, then the views, in the order written.
    public mutating func add(_ part: DecodedPart) throws {
        if case .rest(let rest) = part.contents {
            guard state == nil else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "a second first part"))
            }
            state = rest
            if let spill {
                // The views the first part held go first into the tables that spill.
                var s = rest
                (s.orders, s.transactions, s.subscriptions, s.users) = (
                    ViewTable(), ViewTable(), ViewTable(), ViewTable()
                )
                s.spillViews(to: spill.store, memory: spill.memory, pageSize: spill.pageSize)
                try Self.add(Array(rest.orders.keys), Array(rest.orders.values), to: &s.orders)
                try Self.add(Array(rest.transactions.keys), Array(rest.transactions.values), to: &s.transactions)
                try Self.add(Array(rest.subscriptions.keys), Array(rest.subscriptions.values), to: &s.subscriptions)
                try Self.add(Array(rest.users.keys), Array(rest.users.values), to: &s.users)
                state = s
            }
            return
        }
        guard state != nil else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "views before the first part"))
        }
        if spill != nil {
            let bytes = part.bytes
            // The views of one kind come one part after another: once a part of another kind
            // comes, those held of the others stay in memory, and the bytes they keep go.
            switch part.contents {
            case .rest: preconditionFailure("added above")
            case .orders(let k, let v):
                try addHeld(except: .orders)
                try Self.hold(k, v, bytes, in: &heldOrders, to: &state!.orders)
            case .transactions(let k, let v):
                try addHeld(except: .transactions)
                try Self.hold(k, v, bytes, in: &heldTransactions, to: &state!.transactions)
            case .subscriptions(let k, let v):
                try addHeld(except: .subscriptions)
                try Self.hold(k, v, bytes, in: &heldSubscriptions, to: &state!.subscriptions)
            case .users(let k, let v):
                try addHeld(except: .users)
                try Self.hold(k, v, bytes, in: &heldUsers, to: &state!.users)
            }
            return
        }
        switch part.contents {
        case .rest: preconditionFailure("added above")
        case .orders(let k, let v): orders.append((k, v))
        case .transactions(let k, let v): transactions.append((k, v))
        case .subscriptions(let k, let v): subscriptions.append((k, v))
        case .users(let k, let v): users.append((k, v))
        }
    }

    /// The state the parts hold. Each table is put together from its runs of views (keys hashed
    /// into its index, views copied in, each run freed once it is in), the four tables at once:
    /// one after the other, on one thread, this was the longest part of a projector's start.
    public mutating func finish(tracksChanges: Bool = false) throws -> Projections {
        guard state != nil else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "no first part"))
        }
        if spill != nil {
            // Put together part by part already, but for the views held last.
            try addHeld(except: nil)
            var s = state.take()!
            s.tracksChanges = tracksChanges
            return s
        }
        var s = state.take()!
        // Moved out of the reader and the state, so that each run has one owner and is freed once used.
        let orderRuns = Mutex(Self.runs(&s.orders, &orders)),
            transactionRuns = Mutex(Self.runs(&s.transactions, &transactions))
        let subscriptionRuns = Mutex(Self.runs(&s.subscriptions, &subscriptions)),
            userRuns = Mutex(Self.runs(&s.users, &users))
        let built = Mutex<
            (ViewTable<OrderView>?, ViewTable<TransactionView>?, ViewTable<SubscriptionView>?, ViewTable<UserView>?)
        >((nil, nil, nil, nil))
        let twice = Mutex<String?>(nil)
        DispatchQueue.concurrentPerform(iterations: 4) { kind in
            func build<V: Sendable>(_ runs: borrowing Mutex<[([String], [V])]>) -> ViewTable<V>? {
                let taken = runs.withLock { r in
                    defer { r = [] }
                    return r
                }
                switch ViewTable.assemble(taken) {
                case .success(let table): return table
                case .failure(let duplicate):
                    twice.withLock { $0 = $0 ?? duplicate.key }
                    return nil
                }
            }
            switch kind {
            case 0:
                let table = build(orderRuns)
                built.withLock { $0.0 = table }
            case 1:
                let table = build(transactionRuns)
                built.withLock { $0.1 = table }
            case 2:
                let table = build(subscriptionRuns)
                built.withLock { $0.2 = table }
            default:
                let table = build(userRuns)
                built.withLock { $0.3 = table }
            }
        }
        if let key = twice.withLock({ $0 }) {
            throw Self.twice(key)
        }
        let tables = built.withLock { b in
            defer { b = (nil, nil, nil, nil) }
            return b
        }
        guard let orders = tables.0, let transactions = tables.1, let subscriptions = tables.2, let users = tables.3
        else {
            preconditionFailure("every table is built or a duplicate was thrown")
        }
        (s.orders, s.transactions, s.subscriptions, s.users) = (orders, transactions, subscriptions, users)
        s.tracksChanges = tracksChanges
        return s
    }

    /// Holds a part's views for a table that spills (``Held``), and adds the oldest pages of
    /// those held spilled, as their bytes, while more are held than the table keeps in memory.
    /// A part decoded without its bytes, or once the table has views in memory, is added as
    /// views, after those held.
    private static func hold<V: BinaryFields>(
        _ keys: [String], _ views: [V], _ bytes: (part: [UInt8], ends: [Int])?, in held: inout Held,
        to table: inout ViewTable<V>
    ) throws {
        guard let bytes else {
            try addHeld(&held, to: &table)
            try add(keys, views, to: &table)
            return
        }
        held.keys.append(contentsOf: keys)
        var start = 1
        for end in bytes.ends {
            held.bytes.append(bytes.part[start..<end])
            start = end
        }
        guard table.isAllSpilled, let (pageSize, residentPages) = table.spillShape else {
            try addHeld(&held, to: &table)
            return
        }
        var taken = 0
        while held.keys.count - taken > min(residentPages, pagesDecodedAtStart) * pageSize {
            let page = taken..<(taken + pageSize)
            do {
                try table.addSpilled(keys: held.keys[page], bytes: held.bytes[page])
            } catch {
                throw Self.twice(error.key)
            }
            taken += pageSize
        }
        if taken > 0 {
            held.keys.removeFirst(taken)
            held.bytes.removeFirst(taken)
        }
    }

    /// Adds the views held for every kind but `kind` (the first part's byte) as views.
    private mutating func addHeld(except kind: SnapshotPart?) throws {
        if kind != .orders { try Self.addHeld(&heldOrders, to: &state!.orders) }
        if kind != .transactions { try Self.addHeld(&heldTransactions, to: &state!.transactions) }
        if kind != .subscriptions { try Self.addHeld(&heldSubscriptions, to: &state!.subscriptions) }
        if kind != .users { try Self.addHeld(&heldUsers, to: &state!.users) }
    }

    /// Decodes the views held for a table and adds them as views (they stay in memory), and
    /// holds none.
    private static func addHeld<V: BinaryFields>(_ held: inout Held, to table: inout ViewTable<V>) throws {
        defer { held = Held() }
        for (key, bytes) in zip(held.keys, held.bytes) {
            let (_, view): (String, V) = try BinaryCoding.read(bytes) { try ViewRecord.read($0) }
            guard table.add(key, view) else {
                throw Self.twice(key)
            }
        }
    }

    /// A snapshot that holds the view under `key` twice: not read (the projector folds the log).
    private static func twice(_ key: String) -> DecodingError {
        DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "the view \(key) twice"))
    }

    /// Adds a run of views to a table that spills; a key it has already is refused by name.
    private static func add<V>(_ keys: [String], _ views: [V], to table: inout ViewTable<V>) throws {
        for (key, view) in zip(keys, views) where !table.add(key, view) {
            throw Self.twice(key)
        }
    }

    /// A table's runs, taken out of `table` (any views the first part held, first) and `runs`.
    private static func runs<V>(_ table: inout ViewTable<V>, _ runs: inout [([String], [V])]) -> [([String], [V])] {
        var all = table.isEmpty ? [] : [(table.keys, Array(table.values))]
        table = ViewTable()
        all.append(contentsOf: runs)
        runs = []
        return all
    }
}
