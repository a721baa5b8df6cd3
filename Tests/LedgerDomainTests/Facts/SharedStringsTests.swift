@testable import LedgerDomain
import Testing

/// Product ids that many facts repeat are made once when decoding shares them.
@Suite("Shared strings")
struct SharedStringsTests {
    static func storage(_ s: String) -> UnsafeRawPointer? {
        var s = s
        return s.withUTF8 { UnsafeRawPointer($0.baseAddress) }
    }

    static func order(_ product: String) -> [UInt8] {
        Array(
            #"{"amount":499,"channel":"appstore","currency":"USD","orderId":"o1","productId":"\#(product)","userId":"u1"}"#
                .utf8)
    }

    @Test func aRepeatedProductIdIsOneString() throws {
        let shared = SharedStrings()
        let a = try FactCatalogue.decode(
            type: "OrderCreated", schemaVersion: 1, json: Self.order("com.example.coins.100"), shared: shared)
        let b = try FactCatalogue.decode(
            type: "OrderCreated", schemaVersion: 1, json: Self.order("com.example.coins.100"), shared: shared)
        let c = try FactCatalogue.decode(
            type: "OrderCreated", schemaVersion: 1, json: Self.order("com.example.coins.100"))
        guard case .orderCreated(let x) = a, case .orderCreated(let y) = b, case .orderCreated(let z) = c else {
            Issue.record("not OrderCreated: \(a), \(b), \(c)")
            return
        }
        #expect(x == y && y == z && x.productId == "com.example.coins.100")
        #expect(Self.storage(x.productId) == Self.storage(y.productId))
        #expect(Self.storage(x.productId) != Self.storage(z.productId))
    }

    /// Ids as long as the stores' (more than 15 bytes, on the heap) that several facts name are one
    /// string too: a decoding thread allocates each once, and the views that keep them share it.
    @Test func aRepeatedLongIdIsOneString() throws {
        let shared = SharedStrings()
        func order(_ id: String, user: String) -> [UInt8] {
            Array(
                #"{"amount":499,"channel":"appstore","currency":"USD","orderId":"\#(id)","productId":"p","userId":"\#(user)"}"#
                    .utf8)
        }
        let user = "usr_00000000000000012345"
        let a = try FactCatalogue.decode(
            type: "OrderCreated", schemaVersion: 1, json: order("ord_0000000000000000001", user: user), shared: shared)
        let bound = Array(
            #"{"channel":"appstore","method":"appAccountToken","orderId":"ord_0000000000000000001","transactionId":"2000000000000001","userId":"\#(user)"}"#
                .utf8)
        let b = try FactCatalogue.decode(type: "TransactionBound", schemaVersion: 1, json: bound, shared: shared)
        guard case .orderCreated(let x) = a, case .transactionBound(let y) = b else {
            Issue.record("not OrderCreated and TransactionBound: \(a), \(b)")
            return
        }
        #expect(x.userId == user && y.userId == user && y.orderId == x.orderId)
        #expect(Self.storage(x.userId) == Self.storage(y.userId))
        #expect(Self.storage(x.orderId) == y.orderId.flatMap(Self.storage))
    }

    /// Strings that meet in one slot each come back as themselves; short strings are never shared
    /// (a String keeps up to 15 bytes inline).
    @Test func stringsThatMeetInASlotStayThemselves() {
        let shared = SharedStrings(slots: 1)
        let names = [
            "com.example.vip.month", "com.example.vip.year", "short", "com.example.vip.month",
            "é-com.example.vip.quarter",
        ]
        for _ in 0..<3 {
            for name in names {
                var bytes = Array(name.utf8)
                let made = bytes.withUnsafeMutableBufferPointer { shared.string(UnsafeBufferPointer($0)) }
                #expect(made == name)
            }
        }
    }
}
