import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerLog
import LedgerTesting
import Testing

/// `verifyChain(from:)`: the anchored event first, then only what follows it.
@Suite("Verifying from an anchor", .timeLimit(.minutes(2)))
struct AnchoredVerifyTests {
    static func fiveMore(_ store: EventStore) async throws {
        _ = try await store.append((0..<5).map { testEvent(stream: "later\($0 % 2)") })
    }

    /// Ten events, an anchor at the tenth, five more; then `body` with the store and the anchor.
    static func withAnchoredLog(
        _ name: String, _ body: (EventStore, Anchor, LedgerConfiguration) async throws -> Void
    ) async throws {
        try await TestDatabase.withSchema(name) { owner in
            let store = try await EventStore.open(owner.connecting(as: .writer))
            defer { Task { await store.close() } }
            try await AnchorTests.tenEvents(store)
            let anchor = try await store.anchor()
            try await fiveMore(store)
            try await body(store, anchor, owner)
        }
    }

    /// As the owner, triggers off: the payload of the event at `position` changed, its hash not.
    static func change(_ position: Int64, _ owner: LedgerConfiguration) async throws {
        try await TestDatabase.tamper(
            owner,
            "UPDATE \(quoteIdentifier(owner.schema)).events SET payload = '{\"changed\": true}' WHERE position = \(position)"
        )
    }

    @Test func onlyWhatFollowsTheAnchorIsReadAndItChainsOntoIt() async throws {
        try await TestDatabase.withSchema("fromanchorok") { owner in
            let store = try await EventStore.open(owner.connecting(as: .writer))
            defer { Task { await store.close() } }
            let empty = try await store.anchor()
            try await AnchorTests.tenEvents(store)
            let anchor = try await store.anchor()
            let atTheHead = try await store.verifyChain(from: anchor)
            #expect(atTheHead.isIntact && atTheHead.verified == 0 && atTheHead.lastPosition == 10)
            #expect(atTheHead.lastHash.hexString == anchor.hash)

            try await Self.fiveMore(store)
            let since = try await store.verifyChain(from: anchor)
            let whole = try await store.verifyChain()
            #expect(since.isIntact, "\(since.problem ?? "")")
            #expect(since.verified == 5 && since.lastPosition == 15)
            #expect(since.lastHash == whole.lastHash)
            let fromTheStart = try await store.verifyChain(from: empty)
            #expect(fromTheStart.verified == 15 && fromTheStart.lastHash == whole.lastHash)
        }
    }

    @Test func aChangeAfterTheAnchorIsNamed() async throws {
        try await Self.withAnchoredLog("fromanchorafter") { store, anchor, owner in
            try await Self.change(12, owner)
            let report = try await store.verifyChain(from: anchor)
            #expect(!report.isIntact)
            #expect(report.firstBrokenPosition == 12, "\(report.problem ?? "")")
        }
    }

    @Test func aRewriteBeforeTheAnchorFailsTheAnchorAndNothingIsReHashed() async throws {
        try await Self.withAnchoredLog("fromanchorrewrite") { store, anchor, owner in
            let admin = try await TestDatabase.admin(owner)
            defer { Task { await admin.close() } }
            try await Self.change(4, owner)
            try await AnchorTests.rechain(from: 4, admin, owner.schema)
            #expect(try await store.verifyChain().isIntact, "re-chained: the chain alone cannot see it")
            let report = try await store.verifyChain(from: anchor)
            #expect(!report.isIntact && report.verified == 0 && report.firstBrokenPosition == 10)
            #expect(report.problem?.contains("the anchor does not hold") == true, "\(report.problem ?? "")")
            #expect(report.problem?.contains("rewritten") == true)
        }
    }

    /// The scope, stated: an edit before the anchor that leaves the anchored hash as it is is the
    /// full check's to find, not this one's.
    @Test func whatComesBeforeTheAnchorIsTrustedNotRead() async throws {
        try await Self.withAnchoredLog("fromanchortrust") { store, anchor, owner in
            try await Self.change(3, owner)
            let since = try await store.verifyChain(from: anchor)
            #expect(since.isIntact && since.verified == 5)
            #expect(try await store.verifyChain().firstBrokenPosition == 3)
        }
    }

    /// An anchor of an earlier event is the hash stored there: what an anchor taken when it was
    /// the head said, and verifying from it reads what follows.
    @Test func anAnchorAtAnEarlierPositionIsTheStoredOne() async throws {
        try await Self.withAnchoredLog("fromanchorat") { store, anchor, _ in
            #expect(try await store.anchor(at: 10) == anchor)
            #expect(try await store.anchor(at: 0)?.hash == String(repeating: "0", count: 64))
            #expect(try await store.anchor(at: 16) == nil)
            let seven = try #require(try await store.anchor(at: 7))
            let report = try await store.verifyChain(from: seven)
            #expect(report.isIntact && report.verified == 8 && report.lastPosition == 15)
        }
    }

    @Test func anAnchorOfAnotherSchemaIsRefused() async throws {
        try await Self.withAnchoredLog("fromanchorother") { store, anchor, _ in
            var other = anchor
            other.schema = "somewhere_else"
            let report = try await store.verifyChain(from: other)
            #expect(!report.isIntact && report.problem?.contains("of schema somewhere_else") == true)
        }
    }
}
