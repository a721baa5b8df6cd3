import Foundation
import LedgerCore
import LedgerDomain
import LedgerFoldStore
import LedgerScenarios
import Testing

@Suite("Simulator")
struct SimulatorTests {
    static func spec(_ text: String) -> FaultSpec {
        do { return try FaultSpec.parse(text) } catch { preconditionFailure("\(text): \(error)") }
    }

    /// The audit's keys against the ground truth's, printing the symmetric difference with details.
    static func checkGroundTruth(_ sim: Simulator, _ label: String) {
        let findings = Audit.run(sim.fold(), options: AuditOptions())
        let actual = Set(findings.map(\.key)), expected = Set(sim.groundTruth.map(\.key))
        if actual != expected {
            let extra = findings.filter { !expected.contains($0.key) }.map { "  unexpected \($0.key): \($0.detail)" }
            let missing = expected.subtracting(actual).sorted().map { "  missing \($0)" }
            Issue.record(
                "\(label): audit disagrees with the ground truth\n\((extra + missing).joined(separator: "\n"))")
        }
    }

    /// An audit's fold keeps no user's positions (no finding names them): on a simulated history
    /// with every fault, it finds the same, and its users differ from the full fold's by their
    /// positions only.
    @Test func anAuditsFoldWithoutUsersPositionsFindsTheSame() {
        let sim = Simulator(users: 60, days: 20, seed: 9, faults: Self.spec("all=0.05"))
        let kept = sim.fold()
        var lean = Projections()
        lean.keepsUserPositions = false
        for (i, f) in sim.facts.enumerated() {
            lean.apply(f.fact, FactContext(position: Int64(i + 1), occurredAt: f.at))
        }
        let findings = Audit.run(kept, options: AuditOptions())
        #expect(!findings.isEmpty)
        #expect(Audit.run(lean, options: AuditOptions()) == findings)
        #expect(Audit.verifiedPurchases(lean).byChannel == Audit.verifiedPurchases(kept).byChannel)
        #expect(Audit.policyGrants(lean) == Audit.policyGrants(kept))
        #expect(lean.users.count == kept.users.count && kept.users.contains { !$0.1.positions.isEmpty })
        for (id, user) in kept.users {
            var withoutPositions = user
            withoutPositions.positions = PositionList()
            #expect(lean.users[id] == withoutPositions, "user \(id)")
        }
    }

    @Test func deterministicPerSeed() {
        let a = Simulator(users: 60, days: 30, seed: 42, faults: Self.spec("all=0.03"))
        let b = Simulator(users: 60, days: 30, seed: 42, faults: Self.spec("all=0.03"))
        #expect(a.facts.count == b.facts.count)
        #expect(a.facts.map(\.fact) == b.facts.map(\.fact))
        #expect(a.facts.map(\.at) == b.facts.map(\.at))
        #expect(a.groundTruth == b.groundTruth)
        #expect(a.events().map(\.eventId) == b.events().map(\.eventId))
    }

    @Test func seedsDiffer() {
        let a = Simulator(users: 30, days: 30, seed: 1, faults: .none)
        let b = Simulator(users: 30, days: 30, seed: 2, faults: .none)
        #expect(a.facts.map(\.fact) != b.facts.map(\.fact))
    }

    @Test func everyFactDecodesAndKeysAreUnique() throws {
        let sim = Simulator(users: 150, days: 30, seed: 9, faults: Self.spec("all=0.05"))
        var keys: Set<String> = []
        var previous: Timestamp?
        for (fact, at) in sim.facts {
            let decoded = try FactCatalogue.decode(
                type: fact.typeName, schemaVersion: FactCatalogue.currentVersions[fact.typeName] ?? 1,
                payload: fact.payload)
            #expect(decoded == fact)
            if let key = fact.idempotencyKey { #expect(keys.insert(key).inserted, "duplicate idempotency key \(key)") }
            if let previous { #expect(previous <= at, "log order goes back in time at \(at)") }
            previous = at
        }
        let events = sim.events()
        #expect(Set(events.map(\.eventId)).count == events.count)
        #expect(sim.facts.count > 1000)
    }

    @Test func cleanHistoryHasNoFindings() {
        for seed: UInt64 in [1, 2, 3, 20_260_301] {
            let sim = Simulator(users: 400, days: 30, seed: seed, faults: .none)
            #expect(sim.groundTruth.isEmpty)
            let p = sim.fold()
            let findings = Audit.run(p, options: AuditOptions())
            #expect(
                findings.isEmpty,
                "seed \(seed): \(findings.prefix(10).map { "\($0.key): \($0.detail)" }.joined(separator: "\n"))")
            #expect(p.anomalies.isEmpty, "seed \(seed): \(p.anomalies.prefix(10).map { "\($0.kind): \($0.detail)" })")
        }
    }

    @Test func cleanHistoryCoversTheFieldReports() {
        let sim = Simulator(users: 400, days: 30, seed: 3, faults: .none)
        var methods: Set<BindingMethod> = [], notifications: Set<String> = [], channels: Set<Channel> = []
        var counts: [String: Int] = [:]
        for (fact, _) in sim.facts {
            counts[fact.typeName, default: 0] += 1
            switch fact {
            case .transactionBound(let b):
                methods.insert(b.method)
                channels.insert(b.channel)
            case .storeNotificationReceived(let n): notifications.insert("\(n.type.raw)/\(n.subtype?.raw ?? "")")
            default: break
            }
        }
        #expect(methods == [.appAccountToken, .applicationUsername, .skuFallback, .createdAfterPayment])
        #expect(channels == Set(Channel.allCases))
        for type in [
            "OrderClosed", "VerificationFailed", "SubscriptionRenewed", "RenewalFailed", "AutoRenewChanged",
            "PlanChanged",
            "SubscriptionExpired", "RefundRequested", "RefundDeclined", "Refunded", "RefundReversed",
            "EntitlementRevoked", "CoinsSpent",
        ] {
            #expect((counts[type] ?? 0) > 0, "no \(type) in a clean history of 400 users")
        }
        for n in [
            "DID_RENEW/BILLING_RECOVERY", "DID_FAIL_TO_RENEW/GRACE_PERIOD", "DID_CHANGE_RENEWAL_PREF/UPGRADE",
            "TRANSACTION.SUCCESS/", "ONE_TIME_CHARGE/",
        ] {
            #expect(notifications.contains(n), "no \(n) notification")
        }
    }

    /// The stores' signed word in a clean history, through the service's own translators: pauses,
    /// price-increase consent (given, or expiry for it), prices below a minor unit and in zero- and
    /// three-decimal currencies, and nothing left untranslated.
    @Test func cleanHistoryCoversTheStoresSignedWord() {
        let sim = Simulator(users: 400, days: 30, seed: 3, faults: .none)
        var notifications: Set<String> = [], changes: Set<LifecycleChange> = [], currencies: Set<String> = []
        var inexact = 0
        for (fact, _) in sim.facts {
            switch fact {
            case .storeNotificationReceived(let n):
                notifications.insert("\(n.type.raw)/\(n.subtype?.raw ?? "")")
                #expect(n.untranslated == nil, "\(n.notificationId): \(n.untranslated ?? "")")
            case .subscriptionStateChanged(let c): changes.insert(c.change)
            case .paymentVerified(let v):
                currencies.insert(v.price.currency.code)
                if !v.price.isWholeMinorUnits { inexact += 1 }
            default: break
            }
        }
        for n in [
            "PRICE_INCREASE/PENDING", "PRICE_INCREASE/ACCEPTED", "EXPIRED/PRICE_INCREASE", "10/SUBSCRIPTION_PAUSED",
            "7/SUBSCRIPTION_RESTARTED",
            "11/SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED",
        ] {
            #expect(notifications.contains(n), "no \(n) notification")
        }
        #expect(changes == [.priceConsent, .paused, .pauseScheduled, .resumed])
        #expect(inexact > 0 && currencies.isSuperset(of: ["CNY", "USD", "JPY", "BHD"]), "\(currencies)")
    }

    /// The behaviours of real store traffic appear in a clean history by default: every store fact
    /// names its app, and there are restores, family-shared copies, linked Google tokens, intro
    /// offers, sandbox purchases, grants by policy, partial refunds and acknowledgements.
    @Test func cleanHistoryCoversRealStoreTraffic() {
        let sim = Simulator(users: 400, days: 30, seed: 3, faults: .none)
        var seen: [String: Int] = [:]
        var unnamed: [String] = []
        for (fact, _) in sim.facts {
            switch fact {
            case .transactionTransferred(let m):
                seen[m.method == .supportCorrection ? "move with days left" : "transfer", default: 0] += 1
            case .purchaseAcknowledged: seen["acknowledged", default: 0] += 1
            case .entitlementGranted(let g) where g.isPolicyGrant: seen["policy grant", default: 0] += 1
            case .entitlementRevoked(let r) where r.units != nil: seen["partial revocation", default: 0] += 1
            case .entitlementGranted(let g) where g.app == "com.sim.app.lite":
                seen["second app, same id", default: 0] += 1
            case .paymentVerified(let v):
                if v.ownership == .familyShared { seen["family shared", default: 0] += 1 }
                if v.environment == .sandbox { seen["sandbox", default: 0] += 1 }
                if v.linkedPurchaseToken != nil { seen["linked token", default: 0] += 1 }
                if v.offer != nil { seen["offer", default: 0] += 1 }
                if v.app == nil { unnamed.append(v.transactionId) }
            case .transactionBound(let b) where b.app == nil: unnamed.append(b.transactionId)
            case .clientCallbackReceived(let c) where c.app == nil: unnamed.append(c.transactionId ?? "callback")
            default: break
            }
        }
        for kind in [
            "transfer", "move with days left", "second app, same id", "acknowledged", "policy grant",
            "partial revocation", "family shared",
            "sandbox", "linked token", "offer",
        ] {
            #expect((seen[kind] ?? 0) > 0, "no \(kind) in a clean history of 400 users")
        }
        #expect(unnamed.isEmpty, "store facts without an app: \(unnamed.prefix(5))")
        #expect(Audit.run(sim.fold(), options: AuditOptions()).isEmpty)
    }

    @Test func injectedFaultsAreExactlyWhatTheAuditFinds() {
        let specs = [
            "all=0.03", "all=0.05", "double-grant=0.05,missing-grant=0.05,orphan-payment=0.05",
            "receipt-reused=0.1,wrong-user=0.1,negative-balance=0.1",
        ]
        for text in specs {
            for seed: UInt64 in [11, 12, 13] {
                let sim = Simulator(users: 250, days: 30, seed: seed, faults: Self.spec(text))
                #expect(!sim.groundTruth.isEmpty)
                Self.checkGroundTruth(sim, "\(text) seed \(seed)")
            }
        }
    }

    @Test(arguments: FaultSpec.injectable)
    func eachKindAlone(_ kind: FindingKind) {
        for seed: UInt64 in [21, 22] {
            let sim = Simulator(users: 150, days: 30, seed: seed, faults: Self.spec("\(kind.rawValue)=0.15"))
            #expect(sim.groundTruth.contains { $0.kind == kind }, "no \(kind.rawValue) injected")
            #expect(sim.groundTruth.allSatisfy { $0.kind == kind })
            Self.checkGroundTruth(sim, "\(kind.rawValue) seed \(seed)")
        }
    }

    /// The lifecycle faults: access kept past grace or through on hold, a family revoke not taken
    /// back, a reversal not granted again, each made through the translators and found exactly.
    @Test func lifecycleFaultsAreExactlyWhatTheAuditFinds() {
        for seed: UInt64 in [31, 32] {
            let sim = Simulator(
                users: 300, days: 30, seed: seed,
                faults: Self.spec("subscription-drift=0.2,refund-not-revoked=0.2,missing-grant=0.2"))
            var changes: Set<LifecycleChange> = [], revoked = 0, reversed = 0
            for (fact, _) in sim.facts {
                switch fact {
                case .subscriptionStateChanged(let c): changes.insert(c.change)
                case .storeRevoked: revoked += 1
                case .refundReversed: reversed += 1
                default: break
                }
            }
            #expect(changes.isSuperset(of: [.graceEnded, .onHold]) && revoked > 0 && reversed > 0, "seed \(seed)")
            Self.checkGroundTruth(sim, "lifecycle faults seed \(seed)")
        }
    }

    @Test func shortHistories() {
        for days in [1, 2, 7] {
            let sim = Simulator(users: 80, days: days, seed: 3, faults: Self.spec("all=0.04"))
            Self.checkGroundTruth(sim, "\(days) days")
        }
    }

    @Test func faultSpecParsing() throws {
        #expect(try FaultSpec.parse("none").isNone)
        #expect(try FaultSpec.parse("").isNone)
        let s = try FaultSpec.parse("double-grant=0.02, missing-grant=0.01")
        #expect(s.rate(.doubleGrant) == 0.02 && s.rate(.missingGrant) == 0.01 && s.rate(.orphanPayment) == 0)
        #expect(s.description == "double-grant=0.02,missing-grant=0.01")
        let all = try FaultSpec.parse("all=0.01,stale-order=0")
        #expect(FaultSpec.injectable.filter { $0 != .staleOrder }.allSatisfy { all.rate($0) == 0.01 })
        #expect(all.rate(.staleOrder) == 0 && all.rate(.chainBroken) == 0.01)
        #expect(try FaultSpec.parse(s.description) == s)

        func message(_ text: String) -> String {
            do {
                _ = try FaultSpec.parse(text)
                return ""
            } catch { return "\(error)" }
        }
        #expect(message("double-grnat=0.1").contains("unknown fault kind \"double-grnat\""))
        #expect(message("double-grant=abc").contains("bad rate \"abc\" for double-grant"))
        #expect(message("double-grant=1.5").contains("bad rate \"1.5\""))
        #expect(message("double-grant=-0.1").contains("bad rate"))
        #expect(message("double-grant").contains("has no rate"))
        #expect(message("all=0.2").contains("add up to"))
        #expect(message("none,double-grant=0.1").contains("none"))
        #expect(message("double-grant=0.1,,").contains("empty entry"))
    }
}
