import Foundation
@testable import LedgerCore
@testable import LedgerDomain
@testable import LedgerFoldStore
import Testing

/// Compact optional positions and dates, store values and account tokens read back as what was set.
@Suite("Compact values")
struct CompactValuesTests {
    @Test(arguments: [nil, 0, 1, -1, Int64.max, Int64.min + 1] as [Int64?])
    func readsBackWhatWasSet(_ value: Int64?) throws {
        #expect(CompactInt64(wrappedValue: value).wrappedValue == value)
        let t = value.map(Timestamp.init(microsecondsSince1970:))
        #expect(CompactTimestamp(wrappedValue: t).wrappedValue == t)
        let compact = CompactInt64(wrappedValue: value)
        #expect(try JSONDecoder().decode(CompactInt64.self, from: JSONEncoder().encode(compact)) == compact)
    }

    /// The views' optional dates take eight bytes, and their one-byte fields no room of their own.
    @Test func viewsKeepThemInEightBytes() {
        #expect(MemoryLayout<CompactTimestamp>.size == 8 && MemoryLayout<CompactInt64>.size == 8)
        var t = TransactionView(transactionId: "t1")
        #expect(t.purchaseDate == nil && t.verifiedPosition == nil && t.acknowledgedAt == nil)
        t.purchaseDate = Timestamp(microsecondsSince1970: 5)
        t.verifiedPosition = 7
        t.verifiedAt = Timestamp(microsecondsSince1970: -3)
        #expect(
            t.purchaseDate?.microseconds == 5 && t.verifiedPosition == 7 && t.verifiedAt?.microseconds == -3
                && t.expiresDate == nil)
        t.verifiedPosition = nil
        #expect(t.verifiedPosition == nil)
        var o = OrderView(orderId: "o1")
        o.launchedAt = Timestamp(microsecondsSince1970: 9)
        #expect(o.launchedAt?.microseconds == 9)
        var g = GrantRecord(
            grantId: "g", userId: "u", orderId: nil, entitlement: .coins(1), quantity: 1, position: 1,
            at: Timestamp(microsecondsSince1970: 0))
        #expect(g.revokedAt == nil)
        g.revokedAt = 4
        #expect(g.revokedAt == 4)
    }

    /// Environments and ownerships in one byte when known; others kept apart, through a snapshot too.
    @Test(arguments: [
        (StoreEnvironment.production, Ownership.purchased), (.sandbox, .familyShared),
        (StoreEnvironment(raw: "Staging"), Ownership(raw: "LENT")),
    ])
    func storeValuesReadBack(_ environment: StoreEnvironment, _ ownership: Ownership) throws {
        #expect(MemoryLayout<KnownCode<StoreEnvironment>>.size == 1)
        var t = TransactionView(transactionId: "t1")
        #expect(t.environment == .production && t.ownership == .purchased)
        t.environment = environment
        t.ownership = ownership
        #expect(t.environment == environment && t.ownership == ownership)
        var p = Projections()
        p.transactions["t1"] = t
        let back = try Projections(snapshot: p.snapshot()).transactions["t1"]
        #expect(back?.environment == environment && back?.ownership == ownership)
        t.environment = .xcode
        t.ownership = .purchased
        #expect(t.environment == .xcode && t.ownership == .purchased && t.isSandbox)
    }

    /// Account tokens read back exactly: a canonical UUID kept as its bytes in either case, any
    /// other text as it is.
    @Test(
        arguments: [
            nil, "", "o-wx-1", "7e3fb20b-4cdb-47cc-936d-99d65f608138", "7E3FB20B-4CDB-47CC-936D-99D65F608138",
            "7e3fb20b-4cdb-47cc-936d-99D65F608138", "00000000-0000-0000-0000-000000000000",
            "ffffffff-ffff-ffff-ffff-ffffffffffff",
            "{7e3fb20b-4cdb-47cc-936d-99d65f6081}", "7e3fb20b4cdb-47cc-936d-99d65f6081380",
            "7e3fb20b-4cdb-47cc-936d-99d65f60813g",
            "7e3fb20b-4cdb-47cc-936d-99d65f60813é",
        ] as [String?])
    func accountTokensReadBack(_ token: String?) throws {
        #expect(CompactText(token).text == token)
        #expect(
            try JSONDecoder().decode(CompactText.self, from: JSONEncoder().encode(CompactText(token)))
                == CompactText(token))
        var o = OrderView(orderId: "o1")
        #expect(o.created == nil && o.accountToken == nil && !o.isCreated)
        let created = OrderCreated(
            orderId: "o1", userId: "u1", channel: .appstore, productId: "p",
            price: Money(minorUnits: 600, currency: Currency("CNY")!),
            accountToken: token)
        o.created = created
        #expect(
            o.created == created && o.accountToken == token && o.userId == "u1" && o.price == created.price
                && o.isCreated)
        var p = Projections()
        p.orders["o1"] = o
        #expect(try Projections(snapshot: p.snapshot()).orders["o1"]?.created == created)
    }

    /// A snapshot holding `Int64.min` where a view keeps an optional compact is refused as
    /// damaged, not taken into the view (which would stop the fold).
    @Test func aSnapshotValueTheViewsCannotHoldIsRefused() throws {
        let w = BinaryWriter(fields: true)
        w.int(Int64.min as Int64?)
        w.int(7 as Int64?)
        w.int(nil as Int64?)
        let bytes = w.bytes
        try bytes.withUnsafeBufferPointer { buffer throws in
            let r = BinaryReader(buffer, fields: true)
            #expect(throws: DecodingError.self) { try r.compactInt() }
            let seven = try r.compactTimestamp()
            let none = try r.compactInt()
            #expect(seven == Timestamp(microsecondsSince1970: 7) && none == nil)
        }
    }

    /// The views' sizes as packed: a field added inline (or a compact one made plain) shows here
    /// first, and is worth its bytes times the millions of views a long log keeps.
    @Test func viewsStayAsSmallAsPacked() {
        // 480 since money keeps a store's exact rest below a minor unit (an optional price no longer fits in 16 bytes).
        #expect(MemoryLayout<TransactionView>.stride <= 480)
        // 272 since an order names the app it is bought in.
        #expect(MemoryLayout<OrderView>.stride <= 272)
        #expect(MemoryLayout<GrantRecord>.stride <= 120)
        #expect(MemoryLayout<Money>.stride <= 16 && MemoryLayout<PositionList>.stride <= 40)
    }

    /// A view's lists of bindings and grants, nearly always of one, keep that one inline.
    @Test func oneBindingOrGrantLiesInline() {
        #expect(MemoryLayout<Few<BindingRecord>>.size <= MemoryLayout<BindingRecord>.size + 1)
        #expect(MemoryLayout<Few<GrantRecord>>.size <= MemoryLayout<GrantRecord>.size + 1)
    }
}
