import Foundation
import LedgerCore
import LedgerDomain

// Scenario 26: a transaction id is unique per channel and app, not across them.
extension Scenarios {
    // MARK: 26

    /// The same digits as an App Store id in two apps and as a WeChat Pay id: three purchases.
    static let sameIdAcrossChannelsAndApps: Scenario = {
        var s = Script(26, products: ["coins_60"])
        if let d = Catalogue.definition("coins_300", .wechat) { s.add(.productDefined(d)) }
        let id = "4200002600000001"
        let buyers: [(user: String, channel: Channel, app: String, merchant: String?, product: String, coins: Int64)] =
            [
                (s.user("ana"), .appstore, "com.example.coins", nil, "coins_60", 60),
                (s.user("bo"), .wechat, "wx8888888888888888", "1900000109", "coins_300", 300),
                (s.user("cy"), .appstore, "com.example.coins.lite", nil, "coins_60", 60),
            ]
        for (k, b) in buyers.enumerated() {
            let o = s.order(k + 1), token = s.token(k + 1)
            s.createOrder(o, user: b.user, product: b.product, channel: b.channel, token: token.lowercased)
            s.wait(seconds: 1)
            s.launch(o, channel: b.channel)
            s.wait(seconds: 30)
            let price =
                Catalogue.definition(b.product, b.channel)?.price ?? Money(minorUnits: 0, currency: Catalogue.cny)
            s.add(
                .paymentVerified(
                    PaymentVerified(
                        channel: b.channel, transactionId: id, productId: b.product, purchaseDate: s.now,
                        price: price, appAccountToken: token, app: b.app, merchant: b.merchant)))
            s.wait(seconds: 1)
            s.add(
                .transactionBound(
                    TransactionBound(
                        channel: b.channel, transactionId: id, orderId: o, userId: b.user, method: .appAccountToken,
                        app: b.app, merchant: b.merchant)))
            s.add(
                .entitlementGranted(
                    EntitlementGranted(
                        grantId: "g26-\(k + 1)", userId: b.user, channel: b.channel, transactionId: id,
                        orderId: o, entitlement: .coins(b.coins))))
            s.wait(minutes: 5)
        }
        // A client callback names the id without an app: it joins the first App Store purchase.
        s.add(
            .clientCallbackReceived(
                ClientCallbackReceived(
                    channel: .appstore, userId: buyers[0].user, orderId: s.order(1), transactionId: id,
                    productId: "coins_60", state: .purchased, reportId: "r26-1")))
        let keys = [id, "wechat:\(buyers[1].app):\(id)", "appstore:\(buyers[2].app):\(id)"]
        var transactions: [String: TransactionExpectation] = [:]
        for (k, b) in buyers.enumerated() {
            transactions[keys[k]] = .init(owed: b.coins, granted: b.coins, user: b.user, order: s.order(k + 1))
        }
        return Scenario(
            26, "one id in two channels and two apps",
            "Three purchases, each owed and granted once: no reused receipt, no wrong user, no double grant.", s,
            expected: Expectation(
                transactions: transactions,
                users: Dictionary(uniqueKeysWithValues: buyers.map { ($0.user, UserExpectation(coins: $0.coins)) })))
    }()
}
