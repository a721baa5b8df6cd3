import LedgerCore
@testable import LedgerDomain
@testable import LedgerFoldStore
import LedgerScenarios
import Testing

/// A fold resumed from a snapshot is the fold from scratch: same state (byte for byte), same
/// audit, wherever the log is cut.
@Suite("Fold snapshots")
struct SnapshotTests {
    typealias History = [(fact: Fact, at: Timestamp)]

    static func fold(_ facts: History.SubSequence, into p: inout Projections, from first: Int) {
        for (i, f) in zip(first..., facts) { p.apply(f.fact, FactContext(position: Int64(i + 1), occurredAt: f.at)) }
    }

    /// Cuts `history` at several places: folds up to the cut, snapshots, reads the snapshot back,
    /// folds the rest, and compares with the fold of the whole.
    static func checkResumes(_ history: History, cuts: Int, _ label: String) throws {
        var whole = Projections()
        fold(history[...], into: &whole, from: 0)
        let expected = try whole.snapshot()
        let findings = Audit.run(whole)
        for k in 0...cuts {
            let cut = history.count * k / cuts
            var head = Projections()
            fold(history[..<cut], into: &head, from: 0)
            // In small parts, so that runs of views end anywhere.
            var reader = SnapshotReader()
            try head.writeSnapshot(partBytes: 300) { try reader.add($0) }
            var resumed = try reader.finish()
            #expect(resumed.position == Int64(cut), "\(label) cut at \(cut)")
            fold(history[cut...], into: &resumed, from: cut)
            #expect(try resumed.snapshot() == expected, "\(label) cut at \(cut): state differs")
            #expect(Audit.run(resumed) == findings, "\(label) cut at \(cut): audit differs")
        }
    }

    @Test func theReleaseScenariosResumeAnywhere() throws {
        for scenario in Scenarios.all {
            try Self.checkResumes(scenario.facts, cuts: max(1, scenario.facts.count), "\(scenario)")
        }
    }

    /// A simulated history with every fault injected (double grants, missing grants, refunds,
    /// transfers, shared ids...), cut in ten places.
    @Test func aSimulatedHistoryWithEveryFaultResumesAnywhere() throws {
        let sim = Simulator(users: 80, days: 30, seed: 7, faults: try FaultSpec.parse("all=0.05"))
        #expect(sim.facts.count > 1000)
        try Self.checkResumes(sim.facts, cuts: 10, "simulated")
    }

    /// Any change to what the fold keeps changes these bytes: raise `Projections.snapshotVersion`
    /// (so that snapshots written before are not read) and pin the new digest here.
    @Test func theSnapshotFormatIsPinned() throws {
        var bytes: [UInt8] = []
        var states = Scenarios.all.map { $0.projections() }
        states.append(
            Simulator(users: 40, days: 20, seed: 3, faults: try FaultSpec.parse("all=0.05")).fold())
        for state in states { try state.writeSnapshot(partBytes: 4096) { bytes += $0 } }
        #expect(Projections.snapshotVersion == 12)
        #expect(SHA256.hash(bytes).hexString == "7d893b20253c61ca86b1e140137d6ac8cd8f8a813ff0c5f6690db5a0ce066e4c")
    }

    /// The views write their own fields (fast); their `Codable` conformance lists every stored
    /// property by itself. Whatever the fast form writes and reads back must be the whole view:
    /// a property left out of it shows here.
    @Test func theViewsOwnFieldsKeepEveryStoredProperty() throws {
        var states = Scenarios.all.map { $0.projections() }
        states.append(
            Simulator(users: 80, days: 30, seed: 11, faults: try FaultSpec.parse("all=0.07")).fold())
        for state in states {
            let reference = try state.snapshot(fields: false)
            let fast = try state.snapshot()
            #expect(fast.count < reference.count)
            #expect(try Projections(snapshot: fast).snapshot(fields: false) == reference)
            #expect(try Projections(snapshot: reference, fields: false).snapshot() == fast)
        }
    }

    @Test func damagedSnapshotsAreRefused() throws {
        let bytes = try Scenarios.all[0].projections().snapshot()
        #expect(throws: DecodingError.self) { try Projections(snapshot: Array(bytes.dropLast())) }
        #expect(throws: DecodingError.self) { try Projections(snapshot: []) }
        var parts: [[UInt8]] = []
        try Simulator(users: 20, days: 10, seed: 3, faults: .none).fold().writeSnapshot(partBytes: 500) {
            parts.append($0)
        }
        #expect(parts.count > 3)
        func read(_ parts: [[UInt8]]) throws -> Projections {
            var reader = SnapshotReader()
            for p in parts { try reader.add(p) }
            return try reader.finish()
        }
        #expect(throws: DecodingError.self) { try read(Array(parts.dropFirst())) }  // no first part
        #expect(throws: DecodingError.self) { try read(parts + [parts[1]]) }  // views twice
        #expect(throws: DecodingError.self) { try read(parts.dropLast() + [Array(parts.last!.dropLast())]) }
        #expect(throws: DecodingError.self) { try read(parts + [[9]]) }  // unknown kind
    }
}

/// A fold whose views spill out of memory is the fold in memory: same state, byte for byte, same
/// audit, however small the memory it is given.
@Suite("Spilled folds")
struct SpilledFoldTests {
    static func checkSpilled(_ history: SnapshotTests.History, _ label: String) throws {
        var inMemory = Projections()
        SnapshotTests.fold(history[...], into: &inMemory, from: 0)
        let expected = try inMemory.snapshot()
        let findings = Audit.run(inMemory)
        // Tiny pages and caches: almost every view is spilled, read back and written again; and
        // the views in memory counted again every 16 or 64 facts, or at the default's rare turns.
        for (pageSize, memory, every) in [(4, 1, 16), (8, 20_000, 1 << 17), (64, 200_000, 64), (8, 20_000, 16)] {
            let store = MemorySpillStore()
            var spilled = Projections()
            spilled.spillViews(to: store, memory: memory, pageSize: pageSize, countingEvery: Int64(every))
            SnapshotTests.fold(history[...], into: &spilled, from: 0)
            if inMemory.orders.count > pageSize * 2 {
                #expect(spilled.spilledViews > 0, "\(label): nothing spilled with pages of \(pageSize)")
                #expect(store.size > 0)
            }
            #expect(
                try spilled.snapshot() == expected, "\(label), pages of \(pageSize), \(memory) bytes: state differs")
            let sameAudit = Audit.run(spilled) == findings
            #expect(sameAudit, "\(label), pages of \(pageSize), \(memory) bytes: audit differs")
        }
    }

    /// A user's view grows with every fact about the user, after its page was counted. Given
    /// room for every user as their first page counted them, a fold that counts again as it goes
    /// finds they take more, and spills some; one that never counts again keeps them all.
    @Test func usersGrowingAfterTheirPageWasCountedAreCountedAgain() throws {
        let history = Simulator(users: 80, days: 30, seed: 7, faults: FaultSpec()).facts
        let pageSize = 4
        func folded(memory: Int, countingEvery: Int64) -> Projections {
            var p = Projections()
            p.spillViews(to: MemorySpillStore(), memory: memory, pageSize: pageSize, countingEvery: countingEvery)
            SnapshotTests.fold(history[...], into: &p, from: 0)
            return p
        }
        let never: Int64 = 1 << 40
        // What a user's view takes as the first page counts it, and at the end.
        let first = folded(memory: 1 << 20, countingEvery: never).users
        let last = folded(memory: 1 << 20, countingEvery: 32).users
        let (firstBytes, lastBytes) = (first.spill!.bytesPerView, last.spill!.bytesPerView)
        #expect(
            lastBytes > firstBytes + firstBytes / 16,
            "a user's view: \(firstBytes) B at first, \(lastBytes) B at the end")
        // Users get three quarters of the memory, and their pages three quarters of that: room
        // for every page of users at the first count.
        let pages = (first.count + pageSize - 1) / pageSize
        let memory = (pages * pageSize * firstBytes * 16 + 8) / 9 + 64
        let once = folded(memory: memory, countingEvery: never), again = folded(memory: memory, countingEvery: 32)
        #expect(once.users.spilled.views == 0, "\(first.count) users, \(memory) bytes")
        #expect(again.users.spilled.views > 0)
        #expect(try again.snapshot() == once.snapshot())
    }

    @Test func theReleaseScenariosFoldTheSameSpilled() throws {
        for scenario in Scenarios.all { try Self.checkSpilled(scenario.facts, "\(scenario)") }
    }

    @Test func aSimulatedHistoryWithEveryFaultFoldsTheSameSpilled() throws {
        let sim = Simulator(users: 80, days: 30, seed: 7, faults: try FaultSpec.parse("all=0.05"))
        try Self.checkSpilled(sim.facts, "simulated")
    }

    /// A snapshot read into tables that spill, part by part, then folded on, is the fold of the
    /// whole in memory, wherever the log is cut. With a limit that would hold every view (a
    /// gigabyte here), the views but the newest few pages of each kind start spilled all the
    /// same, as their bytes, and are read back when the fold needs them.
    @Test(arguments: [20_000, 1 << 30])
    func aSnapshotReadIntoSpillingTablesResumesTheSame(memory: Int) throws {
        let history = Simulator(users: 80, days: 30, seed: 13, faults: try FaultSpec.parse("all=0.05")).facts
        var whole = Projections()
        SnapshotTests.fold(history[...], into: &whole, from: 0)
        let expected = try whole.snapshot()
        for k in 1...4 {
            let cut = history.count * k / 4
            var head = Projections()
            SnapshotTests.fold(history[..<cut], into: &head, from: 0)
            let store = MemorySpillStore()
            var reader = SnapshotReader(spillingTo: store, memory: memory, pageSize: 8)
            try head.writeSnapshot(partBytes: 300) { try reader.add($0) }
            var resumed = try reader.finish()
            #expect(resumed.spilledViews > 0 && store.size > 0, "cut at \(cut)")
            // Decoded at start: at most the newest pages, and a page being filled, of each kind.
            let decoded = [
                resumed.orders.count - resumed.orders.spilled.views,
                resumed.transactions.count - resumed.transactions.spilled.views,
                resumed.subscriptions.count - resumed.subscriptions.spilled.views,
                resumed.users.count - resumed.users.spilled.views,
            ]
            #expect(
                decoded.allSatisfy { $0 <= (SnapshotReader.pagesDecodedAtStart + 1) * 8 },
                "cut at \(cut): \(decoded) views decoded at start")
            #expect(try resumed.snapshot() == head.snapshot(), "cut at \(cut): the snapshot read back differs")
            // Written in parts from the spilling tables (spilled views copied as they were
            // spilled, or as they were written again once changed): the parts written in memory.
            #expect(try Self.parts(resumed) == Self.parts(head), "cut at \(cut): the parts written again differ")
            SnapshotTests.fold(history[cut...], into: &resumed, from: cut)
            #expect(try resumed.snapshot() == expected, "cut at \(cut): state differs")
            #expect(try Self.parts(resumed) == Self.parts(whole), "cut at \(cut): the parts of the fold resumed differ")
        }
    }

    static func parts(_ state: Projections) throws -> [[UInt8]] {
        var parts: [[UInt8]] = []
        try state.writeSnapshot(partBytes: 300) { parts.append($0) }
        return parts
    }

    @Test func aSnapshotWithAViewTwiceIsRefusedBySpillingReaders() throws {
        var p = Projections()
        SnapshotTests.fold(Scenarios.all[0].facts[...], into: &p, from: 0)
        var parts: [[UInt8]] = []
        try p.writeSnapshot(partBytes: 200) { parts.append($0) }
        let views = try #require(parts.dropFirst().first)
        var reader = SnapshotReader(spillingTo: MemorySpillStore(), memory: 1, pageSize: 4)
        #expect(throws: DecodingError.self) {
            for part in parts { try reader.add(part) }
            try reader.add(views)
            // The newest views are held until it is known whether they stay in memory: refused
            // once added, at the latest when the reader finishes.
            _ = try reader.finish()
        }
    }
}
