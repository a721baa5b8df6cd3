import _CryptoExtras
import Foundation
import LedgerCore
import LedgerDomain
import LedgerNotificationTesting
@testable import LedgerNotifications
import Testing

/// Every row of the translation table (docs/domain.md, the stores' signed word), each from a payload
/// of that exact shape signed with the tests' own keys and verified before it is translated.
@Suite("The stores' signed word as facts")
struct TranslationTableTests {
    static let chain = try! TestAppleChain()
    static let apple = AppleVerifier(.init(roots: [chain.root], bundleId: TestAppleChain.bundleId))

    /// Verifies and translates an Apple notification; every fact passes the catalogue's validation.
    static func apple(
        _ type: String, _ subtype: String? = nil, transaction: [(String, JSONValue)] = [],
        renewal: [(String, JSONValue)] = [],
        withTransaction: Bool = true, withUUID: Bool = true
    ) async throws -> NotificationFacts {
        let body = try chain.notificationBody(
            type: type, subtype: subtype, transaction: transaction, renewal: renewal,
            withTransaction: withTransaction, withUUID: withUUID)
        let facts = NotificationTranslator.appStore(try await apple.verifyNotification(body: body), raw: body)
        try validate(facts)
        return facts
    }

    static func validate(_ n: NotificationFacts) throws {
        for f in n.facts {
            let event = f.newEvent(occurredAt: n.occurredAt)
            try FactCatalogue.validation().validate(event)
            // What is written reads back as the same fact.
            #expect(
                try FactCatalogue.decode(type: event.type, schemaVersion: event.schemaVersion, payload: event.payload)
                    == f)
        }
    }

    static func notification(_ n: NotificationFacts) -> StoreNotificationReceived? {
        guard case .storeNotificationReceived(let s)? = n.facts.first else { return nil }
        return s
    }

    static let usd = Currency("USD")!

    // MARK: Apple

    @Test(arguments: [
        ("SUBSCRIBED", "INITIAL_BUY"), ("SUBSCRIBED", "RESUBSCRIBE"), ("OFFER_REDEEMED", "INITIAL_BUY"),
        ("ONE_TIME_CHARGE", nil),
    ])
    func applePurchasesAreVerifiedPayments(_ type: String, _ subtype: String?) async throws {
        let n = try await Self.apple(type, subtype)
        #expect(n.facts.map(\.typeName) == ["StoreNotificationReceived", "PaymentVerified"])
        guard case .paymentVerified(let p) = n.facts[1] else { return }
        #expect(
            p.price == Money(minorUnits: 999, currency: Self.usd) && p.productId == "vip_month"
                && p.rawDigest == n.rawDigest)
        #expect(Self.notification(n)?.untranslated == nil)
    }

    @Test(arguments: [nil, "BILLING_RECOVERY"])
    func appleRenewalsAreAPaymentAndARenewal(_ subtype: String?) async throws {
        let n = try await Self.apple("DID_RENEW", subtype)
        #expect(n.facts.map(\.typeName) == ["StoreNotificationReceived", "PaymentVerified", "SubscriptionRenewed"])
        guard case .subscriptionRenewed(let r) = n.facts[2] else { return }
        #expect(r.transactionId == "2000000123456789" && r.originalTransactionId == "2000000100000001")
    }

    @Test func appleRenewalFailuresAreGraceOrBillingRetry() async throws {
        let grace = try await Self.apple(
            "DID_FAIL_TO_RENEW", "GRACE_PERIOD",
            renewal: [
                ("gracePeriodExpiresDate", .int(1_775_000_000_000)),
                ("isInBillingRetryPeriod", .bool(true)),
            ])
        guard case .renewalFailed(let g) = grace.facts[1] else {
            Issue.record("\(grace.facts)")
            return
        }
        #expect(
            g.gracePeriodExpiresAt == Timestamp(millisecondsSince1970: 1_775_000_000_000)
                && g.originalTransactionId == "2000000100000001")
        let retry = try await Self.apple("DID_FAIL_TO_RENEW")
        guard case .renewalFailed(let r) = retry.facts[1] else {
            Issue.record("\(retry.facts)")
            return
        }
        #expect(r.gracePeriodExpiresAt == nil && r.inBillingRetry)
        #expect(Self.notification(grace)?.untranslated == nil && Self.notification(retry)?.untranslated == nil)
        // In grace without its end: recorded, and the notification says what it lacks.
        let endless = try await Self.apple("DID_FAIL_TO_RENEW", "GRACE_PERIOD")
        #expect(endless.facts.map(\.typeName) == ["StoreNotificationReceived", "RenewalFailed"])
        #expect(Self.notification(endless)?.untranslated == "lacks gracePeriodExpiresDate")
        if case .renewalFailed(let e) = endless.facts[1] { #expect(!e.inBillingRetry && e.gracePeriodExpiresAt == nil) }
        let ended = try await Self.apple("GRACE_PERIOD_EXPIRED")
        guard case .subscriptionStateChanged(let e) = ended.facts[1] else {
            Issue.record("\(ended.facts)")
            return
        }
        #expect(e.change == .graceEnded)
    }

    @Test(arguments: [
        ("VOLUNTARY", "voluntary"), ("BILLING_RETRY", "billing-retry"), ("PRICE_INCREASE", "price-increase"),
        ("PRODUCT_NOT_FOR_SALE", "product-not-for-sale"), (nil, "unspecified"),
    ])
    func appleExpiriesKeepTheirReason(_ subtype: String?, _ reason: String) async throws {
        let n = try await Self.apple("EXPIRED", subtype)
        guard case .subscriptionExpired(let e) = n.facts[1] else {
            Issue.record("\(n.facts)")
            return
        }
        #expect(e.reason.raw == reason)
    }

    @Test func appleRenewalStatusAndPreferenceChanges() async throws {
        let off = try await Self.apple("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED")
        guard case .autoRenewChanged(let a) = off.facts[1] else {
            Issue.record("\(off.facts)")
            return
        }
        #expect(!a.enabled)
        // An upgrade is charged at once: its signed transaction is verified, then the plan changes.
        let up = try await Self.apple(
            "DID_CHANGE_RENEWAL_PREF", "UPGRADE", renewal: [("autoRenewProductId", .string("vip_year"))])
        #expect(up.facts.map(\.typeName) == ["StoreNotificationReceived", "PaymentVerified", "PlanChanged"])
        guard case .planChanged(let u) = up.facts.last else {
            Issue.record("\(up.facts)")
            return
        }
        #expect(u.toProductId == "vip_year" && u.effective == .immediate)
        let down = try await Self.apple(
            "DID_CHANGE_RENEWAL_PREF", "DOWNGRADE", renewal: [("autoRenewProductId", .string("vip_week"))])
        guard case .planChanged(let d) = down.facts[1] else {
            Issue.record("\(down.facts)")
            return
        }
        #expect(d.toProductId == "vip_week" && d.effective == .nextRenewal)
        // An offer redeemed to upgrade or downgrade changes the plan as the same change would.
        for (subtype, effective) in [("UPGRADE", PlanChangeEffect.immediate), ("DOWNGRADE", .nextRenewal)] {
            let offer = try await Self.apple(
                "OFFER_REDEEMED", subtype, renewal: [("autoRenewProductId", .string("vip_week"))])
            #expect(offer.facts.map(\.typeName) == ["StoreNotificationReceived", "PaymentVerified", "PlanChanged"])
            guard case .paymentVerified(let paid) = offer.facts[1], case .planChanged(let plan) = offer.facts[2] else {
                continue
            }
            #expect(plan.effective == effective && Self.notification(offer)?.untranslated == nil, "\(subtype)")
            #expect(plan.toProductId == (effective == .immediate ? paid.productId : "vip_week"), "\(subtype)")
        }
        let redeemed = try await Self.apple("OFFER_REDEEMED")
        #expect(redeemed.facts.map(\.typeName) == ["StoreNotificationReceived", "PaymentVerified"])
    }

    @Test(arguments: [("PENDING", "pending"), ("ACCEPTED", "accepted")])
    func applePriceIncreasesRecordTheConsentAndTheNewPrice(_ subtype: String, _ consent: String) async throws {
        let n = try await Self.apple(
            "PRICE_INCREASE", subtype, renewal: [("renewalPrice", .int(12990)), ("currency", .string("USD"))])
        guard case .subscriptionStateChanged(let s) = n.facts[1] else {
            Issue.record("\(n.facts)")
            return
        }
        #expect(
            s.change == .priceConsent && s.priceConsent?.raw == consent
                && s.newPrice == Money(minorUnits: 1299, currency: Self.usd))
    }

    @Test func appleRenewalExtensionsAreTimeOwedWithoutPayment() async throws {
        let n = try await Self.apple("RENEWAL_EXTENDED", transaction: [("expiresDate", .int(1_777_000_000_000))])
        guard case .subscriptionStateChanged(let s) = n.facts[1] else {
            Issue.record("\(n.facts)")
            return
        }
        #expect(
            s.change == .extended && s.expiresAt == Timestamp(millisecondsSince1970: 1_777_000_000_000)
                && s.transactionId == "2000000123456789")
    }

    @Test func appleRefundNotices() async throws {
        for (type, fact) in [
            ("CONSUMPTION_REQUEST", "RefundRequested"), ("REFUND_DECLINED", "RefundDeclined"),
            ("REFUND_REVERSED", "RefundReversed"),
        ] {
            let n = try await Self.apple(type)
            #expect(n.facts.map(\.typeName) == ["StoreNotificationReceived", fact], "\(type)")
        }
    }

    @Test func appleRefundsReturnThePriceTheirShareOrNothing() async throws {
        let full = try await Self.apple("REFUND", transaction: [("revocationType", .string("REFUND_FULL"))])
        guard case .refunded(let f) = full.facts[1] else {
            Issue.record("\(full.facts)")
            return
        }
        #expect(f.amount == Money(minorUnits: 999, currency: Self.usd))
        // 50 % of 9.99 USD is 4.995 USD: kept exactly, never rounded.
        let half = try await Self.apple(
            "REFUND",
            transaction: [("revocationType", .string("REFUND_PRORATED")), ("revocationPercentage", .int(50_000))])
        guard case .refunded(let h) = half.facts[1] else {
            Issue.record("\(half.facts)")
            return
        }
        #expect(h.amount == Money(decimalText: "4.995", currency: Self.usd) && h.amount.description == "4.995 USD")
        let family = try await Self.apple("REFUND", transaction: [("revocationType", .string("FAMILY_REVOKE"))])
        #expect(family.facts.map(\.typeName) == ["StoreNotificationReceived", "StoreRevoked"])
        let revoke = try await Self.apple("REVOKE", transaction: [("revocationType", .string("FAMILY_REVOKE"))])
        guard case .storeRevoked(let r) = revoke.facts[1] else {
            Issue.record("\(revoke.facts)")
            return
        }
        #expect(r.revocationType == "FAMILY_REVOKE" && r.transactionId == "2000000123456789")
    }

    /// A subtype or revocation type Apple has not documented is kept as the notification only,
    /// marked untranslated, never read as the nearest known one (a refund of unknown kind could
    /// return less money than the price, or none).
    @Test func appleUnknownSubtypesAreTheNotificationOnly() async throws {
        let cases: [(String, String?, [(String, JSONValue)], [(String, JSONValue)])] = [
            ("DID_FAIL_TO_RENEW", "SOMETHING_NEW", [], []),
            ("DID_CHANGE_RENEWAL_PREF", "SOMETHING_NEW", [], [("autoRenewProductId", .string("vip_year"))]),
            ("REFUND", nil, [("revocationType", .string("REFUND_SOMETHING_NEW"))], []),
        ]
        for (type, subtype, transaction, renewal) in cases {
            let n = try await Self.apple(type, subtype, transaction: transaction, renewal: renewal)
            #expect(n.facts.map(\.typeName) == ["StoreNotificationReceived"], "\(type)")
            #expect(Self.notification(n)?.untranslated?.contains("SOMETHING_NEW") == true, "\(type)")
        }
        // Without a revocation type (as before Apple named them), a refund is a full one.
        let plain = try await Self.apple("REFUND")
        guard case .refunded(let f) = plain.facts[1] else {
            Issue.record("\(plain.facts)")
            return
        }
        #expect(f.amount == Money(minorUnits: 999, currency: Self.usd))
        // Without a subtype, a preference change takes the renewal back to the product in force.
        let back = try await Self.apple(
            "DID_CHANGE_RENEWAL_PREF", renewal: [("autoRenewProductId", .string("vip_month"))])
        guard case .planChanged(let b) = back.facts[1] else {
            Issue.record("\(back.facts)")
            return
        }
        #expect(b.toProductId == "vip_month" && b.effective == .nextRenewal)
    }

    @Test func appleTestsAndSummariesAreTheNotificationOnly() async throws {
        for type in ["TEST", "RENEWAL_EXTENSION"] {
            let n = try await Self.apple(type, withTransaction: type != "TEST")
            #expect(
                n.facts.map(\.typeName) == ["StoreNotificationReceived"] && Self.notification(n)?.untranslated == nil,
                "\(type)")
        }
    }

    @Test func appleUnknownTypesAndMissingPartsAreKeptUntranslated() async throws {
        for type in ["EXTERNAL_PURCHASE_TOKEN", "A_TYPE_APPLE_ADDS_NEXT_YEAR"] {
            let n = try await Self.apple(type)
            #expect(n.facts.count == 1 && Self.notification(n)?.untranslated?.contains(type) == true, "\(type)")
        }
        let noTransaction = try await Self.apple("ONE_TIME_CHARGE", withTransaction: false)
        #expect(
            noTransaction.facts.count == 1
                && Self.notification(noTransaction)?.untranslated?.contains("signedTransactionInfo") == true)
        let unknownCurrency = try await Self.apple("ONE_TIME_CHARGE", transaction: [("currency", .string("XYZ"))])
        #expect(unknownCurrency.facts.count == 1 && Self.notification(unknownCurrency)?.untranslated != nil)
        let noId = try await Self.apple("SUBSCRIBED", "INITIAL_BUY", withUUID: false)
        #expect(
            noId.notificationId == noId.rawDigest && noId.facts.count == 2
                && Self.notification(noId)?.untranslated != nil)
    }

    /// Apple's milliunits in minor units by the currency's ISO 4217 exponent; an inexact one is kept exactly.
    @Test(arguments: [
        ("USD", 1990, "1.99 USD", true), ("USD", 1995, "1.995 USD", false), ("JPY", 120_000, "120 JPY", true),
        ("KRW", 1_500_000, "1500 KRW", true), ("BHD", 1990, "1.990 BHD", true), ("KWD", 1, "0.001 KWD", true),
        ("JPY", 120_500, "120.5 JPY", false),
    ])
    func applePricesAreExact(_ code: String, _ milli: Int64, _ text: String, _ whole: Bool) async throws {
        let n = try await Self.apple(
            "ONE_TIME_CHARGE", transaction: [("price", .int(milli)), ("currency", .string(code))])
        guard case .paymentVerified(let p) = n.facts[1] else {
            Issue.record("\(n.facts)")
            return
        }
        #expect(p.price.description == text && p.price.isWholeMinorUnits == whole && p.price.milliunits == milli)
    }

    // MARK: Google

    static let google = try! TestGoogleSigner()
    static let googleVerifier = GooglePlayVerifier(
        .init(
            keys: google.publicKeys, audience: TestGoogleSigner.audience,
            serviceAccount: TestGoogleSigner.serviceAccount, packageName: TestGoogleSigner.packageName))

    static func google(_ notification: JSONValue, id: String = UUID().uuidString) throws -> NotificationFacts {
        let body = TestGoogleSigner.pushBody(messageId: id, notification: notification)
        let facts = NotificationTranslator.googlePlay(
            try googleVerifier.verify(authorization: "Bearer " + (try google.token()), body: body), raw: body)
        try validate(facts)
        return facts
    }

    static func rtdn(_ member: String, _ body: [(String, JSONValue)]) -> JSONValue {
        .makeObject([
            ("version", .string("1.0")), ("packageName", .string(TestGoogleSigner.packageName)),
            ("eventTimeMillis", .string("1774944900000")),
            (member, .makeObject(body)),
        ])
    }

    @Test(
        arguments: [
            (Int64(1), ["SubscriptionStateChanged"], "verification"), (2, [], "verification"), (4, [], "verification"),
            (3, ["AutoRenewChanged"], nil), (18, ["AutoRenewChanged"], nil), (5, ["SubscriptionStateChanged"], nil),
            (6, ["RenewalFailed"], nil), (7, ["SubscriptionStateChanged"], nil), (8, ["SubscriptionStateChanged"], nil),
            (19, ["SubscriptionStateChanged"], nil), (22, ["SubscriptionStateChanged"], nil),
            (10, ["SubscriptionStateChanged"], nil),
            (11, ["SubscriptionStateChanged"], nil), (12, ["StoreRevoked"], nil), (13, ["SubscriptionExpired"], nil),
            (20, [], nil),
        ] as [(Int64, [String], String?)])
    func googleSubscriptionNotifications(_ code: Int64, _ facts: [String], _ awaiting: String?) throws {
        let n = try Self.google(TestGoogleSigner.subscription(code))
        #expect(n.facts.map(\.typeName) == ["StoreNotificationReceived"] + facts)
        let s = Self.notification(n)
        #expect(s?.type.raw == String(code) && s?.subtype?.raw == NotificationTranslator.googleSubscriptionTypes[code])
        // Without the API's read, a grace period's end or a price change's new price is lacking too
        // (awaiting nothing).
        #expect(
            s?.awaiting?.rawValue == awaiting
                && (s?.untranslated != nil) == (awaiting != nil || [6, 8, 19, 22].contains(code)))
        if case .subscriptionStateChanged(let c)? = n.facts.dropFirst().first {
            let expected: [Int64: LifecycleChange] = [
                1: .resumed, 5: .onHold, 7: .resumed, 8: .priceConsent, 19: .priceConsent, 22: .priceConsent,
                10: .paused, 11: .pauseScheduled,
            ]
            #expect(c.change == expected[code])
            if code == 8 { #expect(c.priceConsent == .accepted) }
            if code == 19 || code == 22 { #expect(c.priceConsent == .pending) }
        }
    }

    /// `purchases.subscriptions.get`, as the Play Developer API answers it (a renewal's order id ends in `..N`).
    static func subscriptionRead(
        order: String = "GPA.3300-1111-2222-33333", micros: String = "9990000", currency: String = "USD",
        start: Int64 = 1_774_944_000_000, expiry: Int64 = 1_777_536_000_000
    ) -> JSONValue {
        .makeObject([
            ("kind", .string("androidpublisher#subscriptionPurchase")), ("startTimeMillis", .string(String(start))),
            ("expiryTimeMillis", .string(String(expiry))), ("autoRenewing", .bool(true)),
            ("priceCurrencyCode", .string(currency)),
            ("priceAmountMicros", .string(micros)), ("countryCode", .string("US")), ("paymentState", .int(1)),
            ("orderId", .string(order)),
            ("acknowledgementState", .int(1)), ("obfuscatedExternalAccountId", .string("acct-7")),
            ("purchaseType", .int(0)),
        ])
    }

    static func google(_ notification: JSONValue, read: JSONValue) throws -> NotificationFacts {
        try google(notification, read: try GooglePlaySubscriptionRead(json: read))
    }

    static func google(_ notification: JSONValue, read: GooglePlaySubscriptionRead) throws -> NotificationFacts {
        let body = TestGoogleSigner.pushBody(messageId: UUID().uuidString, notification: notification)
        let v = try googleVerifier.verify(authorization: "Bearer " + (try google.token()), body: body)
        let facts = NotificationTranslator.googlePlay(v, raw: body, subscription: read)
        try validate(facts)
        return facts
    }

    /// What a period was charged: nothing in a free trial, the list price outside the introductory
    /// periods, the order's total in them (Google gives the introductory price net of tax); a pending
    /// payment, or an introductory period whose order was not read, awaits.
    @Test func googleSubscriptionReadsSayWhatWasCharged() throws {
        func read(
            _ order: String = "GPA.3300-1111-2222-33333", payment: Int64?, intro cycles: Int64? = nil,
            total: Money? = nil
        ) throws -> GooglePlaySubscriptionRead {
            var members: [(String, JSONValue)] = []
            if case .object(let all) = Self.subscriptionRead(order: order) {
                members = all.map { ($0.key, $0.value) }.filter { $0.0 != "paymentState" }
            }
            if let payment { members.append(("paymentState", .int(payment))) }
            if let cycles {
                members.append(
                    (
                        "introductoryPriceInfo",
                        .makeObject([
                            ("introductoryPriceCurrencyCode", .string("USD")),
                            ("introductoryPriceAmountMicros", .string("990000")),
                            ("introductoryPricePeriod", .string("P1M")), ("introductoryPriceCycles", .int(cycles)),
                        ])
                    ))
            }
            var r = try GooglePlaySubscriptionRead(json: .makeObject(members))
            r.orderTotal = total
            return r
        }
        func charged(_ code: Int64, _ r: GooglePlaySubscriptionRead) throws -> (Money?, StoreNotificationReceived?) {
            let facts = try Self.google(TestGoogleSigner.subscription(code), read: r)
            for case .paymentVerified(let p) in facts.facts { return (p.price, Self.notification(facts)) }
            return (nil, Self.notification(facts))
        }
        let list = Money(minorUnits: 999, currency: Self.usd), paid = Money(minorUnits: 119, currency: Self.usd)
        #expect(try charged(4, read(payment: 1)).0 == list)
        #expect(try charged(4, read(payment: nil)).0 == list)
        #expect(try charged(4, read(payment: 2)).0 == Money(minorUnits: 0, currency: Self.usd))
        #expect(try charged(4, read(payment: 2, intro: 1)).0 == Money(minorUnits: 0, currency: Self.usd))
        let pending = try charged(4, read(payment: 0))
        #expect(pending.0 == nil && pending.1?.awaiting == .verification)
        #expect(pending.1?.untranslated?.contains("pending") == true)
        // Introductory periods (the first, or the first after a free trial): the order's total.
        for (order, cycles) in [
            ("GPA.3300-1111-2222-33333", Int64(1)), ("GPA.3300-1111-2222-33333..0", 1),
            ("GPA.3300-1111-2222-33333..0", 2),
        ] {
            let r = try read(order, payment: 1, intro: cycles)
            #expect(r.needsOrder, "\(order) \(cycles)")
            let unread = try charged(order.hasSuffix("..0") ? 2 : 4, r)
            #expect(unread.0 == nil && unread.1?.awaiting == .verification, "\(order) \(cycles)")
            #expect(
                try charged(order.hasSuffix("..0") ? 2 : 4, read(order, payment: 1, intro: cycles, total: paid)).0
                    == paid)
        }
        // Past them, the list price, with no order read.
        let after = try read("GPA.3300-1111-2222-33333..1", payment: 1, intro: 1)
        #expect(!after.needsOrder)
        #expect(try charged(2, after).0 == list)
    }

    /// With the Play Developer API's read, purchases and renewals are verified payments, exactly in micros.
    @Test func googlePurchasesAndRenewalsWithTheirRead() throws {
        let bought = try Self.google(TestGoogleSigner.subscription(4), read: Self.subscriptionRead())
        #expect(
            bought.facts.map(\.typeName) == ["StoreNotificationReceived", "PaymentVerified"]
                && Self.notification(bought)?.untranslated == nil)
        guard case .paymentVerified(let p) = bought.facts[1] else { return }
        #expect(
            p.transactionId == "GPA.3300-1111-2222-33333" && p.originalTransactionId == "purchase-token-abc"
                && p.productId == "vip_month")
        #expect(
            p.price == Money(minorUnits: 999, currency: Self.usd) && p.environment == .sandbox
                && p.obfuscatedAccountId == "acct-7")
        #expect(p.purchaseDate == Timestamp(millisecondsSince1970: 1_774_944_000_000))
        for code: Int64 in [2, 1] {
            let renewed = try Self.google(
                TestGoogleSigner.subscription(code),
                read: Self.subscriptionRead(order: "GPA.3300-1111-2222-33333..0", micros: "1995000"))
            let names = renewed.facts.map(\.typeName)
            #expect(names.suffix(2) == ["PaymentVerified", "SubscriptionRenewed"], "\(code): \(names)")
            guard case .subscriptionRenewed(let r)? = renewed.facts.last else { continue }
            // A renewal's period starts at the notification's event time.
            #expect(
                r.transactionId == "GPA.3300-1111-2222-33333..0"
                    && r.purchaseDate == Timestamp(millisecondsSince1970: 1_774_944_900_000))
            #expect(r.price?.description == "1.995 USD")
        }
        // A price change's consent with the new price the read gives.
        var withChange: [(String, JSONValue)] = []
        if case .object(let all) = Self.subscriptionRead() { withChange = all.map { ($0.key, $0.value) } }
        withChange.append(
            (
                "priceChange",
                .makeObject([
                    ("newPrice", .makeObject([("priceMicros", .string("12990000")), ("currency", .string("USD"))])),
                    ("state", .int(1)),
                ])
            ))
        // A new price that cannot be read is left out, never a reason to refuse the read.
        var unreadable = withChange.filter { $0.0 != "priceChange" }
        unreadable.append(("priceChange", .makeObject([("newPrice", .makeObject([("priceMicros", .string("x"))]))])))
        #expect(try GooglePlaySubscriptionRead(json: .makeObject(unreadable)).newPrice == nil)
        let consented = try Self.google(TestGoogleSigner.subscription(8), read: .makeObject(withChange))
        guard case .subscriptionStateChanged(let consent) = consented.facts[1] else {
            Issue.record("\(consented.facts)")
            return
        }
        #expect(
            consent.priceConsent == .accepted && consent.newPrice == Money(minorUnits: 1299, currency: Self.usd)
                && Self.notification(consented)?.untranslated == nil)
        let deferred = try Self.google(TestGoogleSigner.subscription(9), read: Self.subscriptionRead())
        guard case .subscriptionStateChanged(let d) = deferred.facts[1] else {
            Issue.record("\(deferred.facts)")
            return
        }
        #expect(d.change == .extended && d.expiresAt == Timestamp(millisecondsSince1970: 1_777_536_000_000))
        let grace = try Self.google(TestGoogleSigner.subscription(6), read: Self.subscriptionRead())
        guard case .renewalFailed(let g) = grace.facts[1] else {
            Issue.record("\(grace.facts)")
            return
        }
        #expect(g.gracePeriodExpiresAt == Timestamp(millisecondsSince1970: 1_777_536_000_000) && !g.inBillingRetry)
        #expect(throws: NotificationRefusal.self) {
            try GooglePlaySubscriptionRead(json: .makeObject([("orderId", .string("GPA.1"))]))
        }
        // Items changed: the plan the v2 read names is in force from the notification.
        let body = TestGoogleSigner.pushBody(messageId: "m-items", notification: TestGoogleSigner.subscription(17))
        let v = try Self.googleVerifier.verify(authorization: "Bearer " + (try Self.google.token()), body: body)
        let items = NotificationTranslator.googlePlay(v, raw: body, itemsProduct: "vip_year")
        try Self.validate(items)
        guard case .planChanged(let plan) = items.facts.last else {
            Issue.record("\(items.facts)")
            return
        }
        #expect(
            plan.toProductId == "vip_year" && plan.effective == .immediate
                && Self.notification(items)?.untranslated == nil)
    }

    /// A one-time purchase with its product purchase and its order (whose total is what was paid).
    @Test func googleOneTimePurchaseWithItsRead() throws {
        let n = Self.rtdn(
            "oneTimeProductNotification",
            [
                ("version", .string("1.0")), ("notificationType", .int(1)),
                ("purchaseToken", .string("tok-1")), ("sku", .string("coins_100")),
            ])
        let product = JSONValue.makeObject([
            ("purchaseTimeMillis", .string("1774944000000")), ("purchaseState", .int(0)),
            ("orderId", .string("GPA.3309-1")),
            ("quantity", .int(2)), ("acknowledgementState", .int(0)),
            ("obfuscatedExternalAccountId", .string("acct-9")),
        ])
        let order = JSONValue.makeObject([
            ("orderId", .string("GPA.3309-1")), ("purchaseToken", .string("tok-1")),
            (
                "total",
                .makeObject([("currencyCode", .string("KWD")), ("units", .string("1")), ("nanos", .int(995_000_000))])
            ),
        ])
        let body = TestGoogleSigner.pushBody(messageId: "m-otp", notification: n)
        let v = try Self.googleVerifier.verify(authorization: "Bearer " + (try Self.google.token()), body: body)
        let facts = NotificationTranslator.googlePlay(
            v, raw: body, product: try GooglePlayProductRead(product: product, order: order))
        try Self.validate(facts)
        guard case .paymentVerified(let p) = facts.facts.last else {
            Issue.record("\(facts.facts)")
            return
        }
        #expect(
            p.transactionId == "GPA.3309-1" && p.originalTransactionId == nil && p.quantity == 2
                && p.productId == "coins_100" && p.purchaseToken == "tok-1")
        #expect(p.price.description == "1.995 KWD" && p.obfuscatedAccountId == "acct-9" && p.environment == .production)
        // Only a purchased one is a payment: a pending one awaits it, a canceled one is the notification only.
        for (state, awaiting) in [(Int64(2), true), (1, false)] {
            var pending = product
            if case .object(let all) = product {
                pending = .makeObject(all.map { ($0.key, $0.key == "purchaseState" ? .int(state) : $0.value) })
            }
            let f = NotificationTranslator.googlePlay(
                v, raw: body, product: try GooglePlayProductRead(product: pending, order: order))
            #expect(f.facts.count == 1 && (Self.notification(f)?.awaiting == .verification) == awaiting, "\(state)")
        }
        if case .object(let all) = product {
            let stateless = JSONValue.makeObject(all.filter { $0.key != "purchaseState" }.map { ($0.key, $0.value) })
            #expect(throws: NotificationRefusal.self) { try GooglePlayProductRead(product: stateless, order: order) }
        }
        // A total finer than a micro is refused, never rounded.
        let fine = JSONValue.makeObject([
            ("total", .makeObject([("currencyCode", .string("USD")), ("units", .string("1")), ("nanos", .int(1))]))
        ])
        #expect(throws: NotificationRefusal.self) { try GooglePlayProductRead(product: product, order: fine) }
    }

    @Test func googleOneTimeProductsVoidsAndRefundReviews() throws {
        let bought = try Self.google(
            Self.rtdn(
                "oneTimeProductNotification",
                [
                    ("version", .string("1.0")), ("notificationType", .int(1)),
                    ("purchaseToken", .string("tok-1")), ("sku", .string("coins_100")),
                ]))
        #expect(
            bought.facts.count == 1 && Self.notification(bought)?.awaiting == .verification
                && Self.notification(bought)?.originalTransactionId == "tok-1")
        let canceled = try Self.google(
            Self.rtdn(
                "oneTimeProductNotification", [("notificationType", .int(2)), ("purchaseToken", .string("tok-2"))]))
        #expect(canceled.facts.count == 1 && Self.notification(canceled)?.untranslated == nil)
        let whole = try Self.google(TestGoogleSigner.voided(orderId: "GPA.1"))
        #expect(whole.facts.map(\.typeName) == ["StoreNotificationReceived", "PurchaseVoided"])
        // A quantity-based partial void without its quantity is never a whole void.
        let partial = try Self.google(TestGoogleSigner.voided(orderId: "GPA.2", refundType: 2))
        #expect(
            partial.facts.count == 1 && Self.notification(partial)?.awaiting == .voidedQuantity
                && Self.notification(partial)?.transactionId == "GPA.2")
        let counted = try Self.google(
            Self.rtdn(
                "voidedPurchaseNotification",
                [
                    ("purchaseToken", .string("t")), ("orderId", .string("GPA.3")),
                    ("productType", .int(2)), ("refundType", .int(2)), ("voidedQuantity", .int(2)),
                ]))
        guard case .purchaseVoided(let v) = counted.facts[1] else {
            Issue.record("\(counted.facts)")
            return
        }
        #expect(v.voidedQuantity == 2)
        let review = try Self.google(
            Self.rtdn(
                "pendingRefundReviewNotification", [("purchaseToken", .string("t")), ("orderId", .string("GPA.4"))]))
        #expect(review.facts.map(\.typeName) == ["StoreNotificationReceived", "RefundRequested"])
        let test = try Self.google(Self.rtdn("testNotification", [("version", .string("1.0"))]))
        #expect(test.facts.count == 1 && Self.notification(test)?.untranslated == nil)
    }

    @Test func googleUnknownNotificationsAreKeptUntranslated() throws {
        for n in [
            Self.rtdn("aNotificationGoogleAddsNextYear", [("x", .int(1))]), TestGoogleSigner.subscription(99),
            Self.rtdn("oneTimeProductNotification", [("notificationType", .int(7)), ("purchaseToken", .string("t"))]),
        ] {
            let facts = try Self.google(n)
            #expect(facts.facts.count == 1 && Self.notification(facts)?.untranslated != nil)
        }
    }

    // MARK: WeChat

    static func weChat(
        _ wx: TestWeChat, _ n: (body: [UInt8], headers: WeChatPayVerifier.Headers),
        configuration: WeChatPayVerifier.Configuration? = nil,
        order: NotificationTranslator.WeChatOrder? = nil
    ) throws -> NotificationFacts {
        let v = try WeChatPayVerifier(configuration ?? wx.configuration).verify(headers: n.headers, body: n.body)
        let facts = NotificationTranslator.weChatPay(v, raw: n.body, headers: n.headers, order: order)
        try validate(facts)
        return facts
    }

    @Test func weChatPaymentsAreVerifiedAndBoundToTheirOrder() throws {
        let wx = try TestWeChat()
        let n = try Self.weChat(
            wx, try wx.notification(id: "EV-pay"), order: .init(productId: "coins_60", userId: "u-1"))
        #expect(n.facts.map(\.typeName) == ["StoreNotificationReceived", "PaymentVerified", "TransactionBound"])
        guard case .paymentVerified(let p) = n.facts[1], case .transactionBound(let b) = n.facts[2] else { return }
        #expect(
            p.price == Money(minorUnits: 600, currency: Currency("CNY")!) && p.productId == "coins_60"
                && p.merchant == TestWeChat.merchantId && p.outTradeNo == "order-0001")
        #expect(b.orderId == "order-0001" && b.userId == "u-1" && b.method == .outTradeNo)
        let unknownOrder = try Self.weChat(wx, try wx.notification(id: "EV-pay-2"))
        #expect(unknownOrder.facts.count == 1 && Self.notification(unknownOrder)?.awaiting == .verification)
    }

    @Test(arguments: [("SUCCESS", true), ("ABNORMAL", false), ("CLOSED", false)])
    func weChatRefundsCarryTheirStatus(_ status: String, _ returned: Bool) throws {
        let wx = try TestWeChat()
        let n = try Self.weChat(
            wx,
            try wx.signed(
                id: "EV-r-\(status)", eventType: "REFUND.\(status)",
                resource: TestWeChat.refund(status: status, refund: 300),
                associatedData: "refund"))
        guard case .refunded(let r) = n.facts[1] else {
            Issue.record("\(n.facts)")
            return
        }
        #expect(r.returnedMoney == returned && r.amount.minorUnits == 300 && r.status?.raw == status)
    }

    @Test func weChatUnknownEventsAreKeptUntranslated() throws {
        let wx = try TestWeChat()
        let n = try Self.weChat(
            wx, try wx.signed(id: "EV-x", eventType: "MCHTRANSFER.BILL.FINISHED", resource: TestWeChat.transaction()))
        #expect(n.facts.count == 1 && Self.notification(n)?.untranslated?.contains("MCHTRANSFER.BILL.FINISHED") == true)
    }

    /// Public-key mode (`Wechatpay-Serial: PUB_KEY_ID_…`) beside platform certificates, as while a merchant switches.
    @Test func weChatPublicKeyModeIsVerifiedBesideCertificates() throws {
        let wx = try TestWeChat()
        let publicKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let both = wx.configuration(publicKey: publicKey)
        let byKey = try wx.notification(id: "EV-pk")
        var signed = try wx.signed(
            id: "EV-pk", eventType: "TRANSACTION.SUCCESS", resource: TestWeChat.transaction(), signer: publicKey,
            serial: TestWeChat.publicKeyId)
        #expect(try Self.weChat(wx, signed, configuration: both).facts.count == 1)
        #expect(try Self.weChat(wx, byKey, configuration: both).facts.count == 1)
        #expect(
            try Self.weChat(
                wx,
                try wx.signed(
                    id: "EV-pk2", eventType: "TRANSACTION.SUCCESS", resource: TestWeChat.transaction(),
                    signer: publicKey,
                    serial: TestWeChat.publicKeyId),
                configuration: wx.configuration(publicKey: publicKey, certificates: false)
            )
            .facts.count == 1)
        // Another key under that id, or an id not configured: refused.
        signed = try wx.signed(
            id: "EV-pk3", eventType: "TRANSACTION.SUCCESS", resource: TestWeChat.transaction(), signer: wx.platformKey,
            serial: TestWeChat.publicKeyId)
        #expect(throws: NotificationRefusal.self) {
            try WeChatPayVerifier(both).verify(headers: signed.headers, body: signed.body)
        }
        #expect(throws: NotificationRefusal.self) {
            try WeChatPayVerifier(wx.configuration).verify(headers: signed.headers, body: signed.body)
        }
    }
}
