import Foundation
import LedgerCore
import LedgerDomain

// Scenarios 19 to 25: subscriptions, environments, people and acknowledgements as real traffic has them.
extension Scenarios {
    // MARK: 19

    /// An immediate upgrade on day 10 of a month; fulfilment keeps the old month's 30 days.
    static let upgradeKeepsOldPeriod: Scenario = {
        var s = Script(19, products: ["vip.month", "vip.month.premium"])
        let sam = s.user("sam"), o = s.order(1), m = s.tx(1), p = s.tx(2)
        s.createOrder(o, user: sam, product: "vip.month", token: s.token(1).lowercased)
        s.wait(seconds: 1)
        s.launch(o)
        s.at(day: 0, seconds: 30)
        s.verify(m, product: "vip.month", original: m, purchased: day0, expires: day(30), token: s.token(1))
        s.wait(seconds: 1)
        s.bind(m)
        s.grant(m)
        s.at(day: 10)
        s.notify("n19-1", "DID_CHANGE_RENEWAL_PREF", "UPGRADE", tx: p, original: m)
        s.add(
            .planChanged(
                PlanChanged(
                    channel: .appstore, originalTransactionId: m, notificationId: "n19-1",
                    toProductId: "vip.month.premium",
                    effective: .immediate)))
        s.wait(seconds: 5)
        s.verify(p, product: "vip.month.premium", original: m, purchased: s.now, expires: day(40))
        s.wait(seconds: 2)
        s.grant(p)
        return Scenario(
            19, "an upgrade keeps the old period's time",
            "The upgrade ends the month on day 10 (Apple refunds the rest): the 20 days still granted for it are drift.",
            s,
            expected: Expectation(
                transactions: [m: .init(owed: 10, granted: 30, status: .excess, user: sam, order: o)],
                auditFindings: ["subscription-drift"]))
    }()

    // MARK: 20

    /// A Google upgrade: a new purchase token names the old one in linkedPurchaseToken.
    static let googleLinkedToken: Scenario = {
        var s = Script(20, products: ["vip_weekly", "vip_weekly_plus"], channel: .googleplay)
        let tess = s.user("tess"), o = s.order(1), t1 = s.gpa(1), t2 = s.gpa(2), oldToken = "tok20-a",
            newToken = "tok20-b"
        let token = s.token(1).lowercased
        s.createOrder(o, user: tess, product: "vip_weekly", channel: .googleplay, token: token)
        s.wait(seconds: 1)
        s.launch(o, channel: .googleplay)
        s.at(day: 0, seconds: 30)
        s.verify(t1, product: "vip_weekly", channel: .googleplay, original: oldToken, purchased: day0, expires: day(7))
        { $0.obfuscatedAccountId = token }
        s.wait(seconds: 1)
        s.bind(t1)
        s.grant(t1)
        s.wait(seconds: 2)
        s.add(
            .purchaseAcknowledged(PurchaseAcknowledged(channel: .googleplay, transactionId: t1, acknowledgedAt: s.now)))
        s.at(day: 3)
        s.notify("gp-n20-1", "4", "SUBSCRIPTION_PURCHASED", channel: .googleplay, original: newToken)
        s.verify(
            t2, product: "vip_weekly_plus", channel: .googleplay, original: newToken, purchased: s.now, expires: day(10)
        ) {
            $0.linkedPurchaseToken = oldToken
        }
        s.wait(seconds: 2)
        s.grant(t2, to: tess)
        s.wait(seconds: 2)
        s.add(
            .purchaseAcknowledged(PurchaseAcknowledged(channel: .googleplay, transactionId: t2, acknowledgedAt: s.now)))
        return Scenario(
            20, "Google upgrade with a linked purchase token",
            "The old token's subscription ends at the change; the new one keeps its user; no orphan, no drift.", s,
            expected: Expectation(
                transactions: [t2: .init(owed: 7, granted: 7, user: tess)],
                subscriptions: [
                    "googleplay:\(oldToken)": .init(.expired(.superseded), expiresAt: day(3)),
                    "googleplay:\(newToken)": .init(.active, expiresAt: day(10)),
                ]))
    }()

    // MARK: 21

    /// A pay-up-front intro offer: two months for the price the store signed.
    static let introOfferPaidUpFront: Scenario = {
        var s = Script(21, products: ["vip.month"])
        let uma = s.user("uma"), o = s.order(1), t = s.tx(1)
        s.createOrder(o, user: uma, product: "vip.month", token: s.token(1).lowercased)
        s.wait(seconds: 1)
        s.launch(o)
        s.at(day: 0, seconds: 30)
        s.verify(t, product: "vip.month", original: t, purchased: day0, expires: day(60), token: s.token(1)) {
            $0.offer = "introductory:PAY_UP_FRONT"
        }
        s.wait(seconds: 1)
        s.bind(t)
        s.grant(t, entitlement: .period(entitlement: "vip", days: 60))
        return Scenario(
            21, "intro offer paid up front",
            "The store signed 60 days: a 60-day grant is owed, not drift against the catalogue's 30.", s,
            expected: Expectation(transactions: [t: .init(owed: 60, granted: 60, user: uma, order: o)]))
    }()

    // MARK: 22

    /// A sandbox purchase never granted, and two family-shared copies, one never granted.
    static let sandboxAndFamilySharing: Scenario = {
        var s = Script(22, products: ["no_ads"])
        let vic = s.user("vic"), o1 = s.order(1), o2 = s.order(2), o3 = s.order(3), t1 = s.tx(1), t2 = s.tx(2),
            t3 = s.tx(3)
        for (o, k) in [(o1, 1), (o2, 2), (o3, 3)] {
            s.createOrder(o, user: vic, product: "no_ads", token: s.token(k).lowercased)
        }
        s.wait(seconds: 20)
        s.verify(t1, product: "no_ads", purchased: s.now, token: s.token(1)) { $0.environment = .sandbox }
        s.wait(seconds: 1)
        s.bind(t1)
        s.wait(seconds: 20)
        s.verify(t2, product: "no_ads", purchased: s.now, token: s.token(2)) { $0.ownership = .familyShared }
        s.wait(seconds: 1)
        s.bind(t2)
        s.grant(t2)
        s.wait(seconds: 20)
        s.verify(t3, product: "no_ads", purchased: s.now, token: s.token(3)) { $0.ownership = .familyShared }
        s.wait(seconds: 1)
        s.bind(t3)
        s.wait(hours: 1)
        s.notify("n22-x", "TEST")
        return Scenario(
            22, "sandbox and family sharing",
            "The sandbox purchase is shown apart and judged by no rule; a family-shared copy is owed its feature but carries no money at risk.",
            s,
            expected: Expectation(
                transactions: [
                    t1: .init(owed: 1, granted: 0, status: .sandbox, user: vic, order: o1, grants: 0),
                    t2: .init(owed: 1, granted: 1, user: vic, order: o2),
                    t3: .init(owed: 1, granted: 0, status: .missing, user: vic, order: o3, grants: 0),
                ],
                users: [vic: .init(features: ["no_ads"])], auditFindings: ["missing-grant"]))
    }()

    // MARK: 23

    /// Restored on a new account: support moves the purchase to the new user.
    static let restoreToNewAccount: Scenario = {
        var s = Script(23, products: ["no_ads"])
        let wes = s.user("wes"), wes2 = s.user("wes-new"), o = s.order(1), t = s.tx(1)
        coinPurchase(&s, user: wes, order: o, tx: t, k: 1, product: "no_ads")
        s.at(day: 30)
        s.callback(user: wes2, tx: t, product: "no_ads", state: .restored)
        s.wait(minutes: 10)
        s.add(
            .transactionTransferred(
                TransactionTransferred(
                    channel: .appstore, transactionId: t, transferId: "mv23-1", fromUserId: wes,
                    toUserId: wes2, method: .restore, reason: "restored on a new account",
                    authorizedBy: "support:bob")))
        s.wait(seconds: 5)
        s.revoke(t, user: wes, reason: .support)
        s.wait(seconds: 5)
        s.grant(t, to: wes2)
        return Scenario(
            23, "restore to a new account",
            "After the move the new account owns the purchase: no wrong user, no reused receipt.", s,
            expected: Expectation(users: [wes: .init(), wes2: .init(features: ["no_ads"])]))
    }()

    // MARK: 24

    /// The app was signed out when it reported the purchase; the token binds it all the same.
    static let signedOutCallback: Scenario = {
        var s = Script(24, products: ["coins_60"])
        let xia = s.user("xia"), o = s.order(1), t = s.tx(1)
        s.createOrder(o, user: xia, product: "coins_60", token: s.token(1).lowercased)
        s.wait(seconds: 2)
        s.launch(o)
        s.wait(seconds: 30)
        s.add(
            .clientCallbackReceived(
                ClientCallbackReceived(
                    channel: .appstore, userId: nil, transactionId: t, productId: "coins_60",
                    state: .purchased, reportId: "r24-1")))
        s.wait(seconds: 1)
        s.verify(t, product: "coins_60", purchased: s.now.adding(seconds: -10), token: s.token(1))
        s.wait(seconds: 1)
        s.bind(t)
        s.grant(t)
        return Scenario(
            24, "callback from a signed-out app",
            "Recorded without a user; bound by its token and granted once.", s,
            expected: Expectation(
                transactions: [t: .init(owed: 60, granted: 60, user: xia, order: o)], users: [xia: .init(coins: 60)]))
    }()

    // MARK: 25

    /// A Google purchase granted but never acknowledged.
    static let unacknowledgedPurchase: Scenario = {
        var s = Script(25, products: ["coins_60"], channel: .googleplay)
        let yan = s.user("yan"), o = s.order(1), t = s.gpa(1)
        googlePurchase(&s, user: yan, order: o, tx: t, k: 1, acknowledged: false)
        s.checkpoint(
            "not acknowledged yet, within three days",
            Expectation(transactions: [t: .init(owed: 60, granted: 60, user: yan, order: o)]))
        s.at(day: 4)
        s.notify("gp-n25-x", "TEST", channel: .googleplay)
        return Scenario(
            25, "Google purchase never acknowledged",
            "Unacknowledged after three days of log time: Google refunds it.", s,
            expected: Expectation(
                transactions: [t: .init(owed: 60, granted: 60, user: yan, order: o)],
                auditFindings: ["unacknowledged-purchase"]))
    }()
}
