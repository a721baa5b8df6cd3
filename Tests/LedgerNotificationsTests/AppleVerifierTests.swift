import Crypto
import Foundation
import LedgerCore
import LedgerDomain
import LedgerNotificationTesting
@testable import LedgerNotifications
import Testing

/// App Store Server Notifications V2, signed by chains the tests make: a valid one verifies and
/// translates; each forgery or mismatch is refused with its own reason.
@Suite("Apple notifications")
struct AppleVerifierTests {
    static func verifier(_ chain: TestAppleChain, environment: String = "Production") -> AppleVerifier {
        AppleVerifier(.init(roots: [chain.root], bundleId: TestAppleChain.bundleId, environment: environment))
    }

    func refusal(_ verifier: AppleVerifier, _ body: [UInt8]) async -> NotificationRefusal.Kind? {
        do {
            _ = try await verifier.verifyNotification(body: body)
            return nil
        } catch {
            return error.kind
        }
    }

    @Test func aValidNotificationVerifiesWithItsTransactionAndRenewal() async throws {
        let chain = try TestAppleChain()
        let v = try await Self.verifier(chain).verifyNotification(body: try chain.notificationBody())
        #expect(v.payload["notificationType"]?.stringValue == "SUBSCRIBED")
        #expect(v.transaction?["transactionId"]?.stringValue == "2000000123456789")
        #expect(v.renewal?["autoRenewProductId"]?.stringValue == "vip_month")
    }

    @Test func aForgedSignatureIsRefused() async throws {
        let chain = try TestAppleChain()
        #expect(
            await refusal(Self.verifier(chain), try chain.notificationBody(signer: P256.Signing.PrivateKey()))
                == .forgedSignature)
    }

    @Test func aChainToAnotherRootIsRefused() async throws {
        let chain = try TestAppleChain()
        let other = try TestAppleChain(name: "Other")
        #expect(await refusal(Self.verifier(other), try chain.notificationBody()) == .untrustedChain)
    }

    @Test func anExpiredLeafIsRefused() async throws {
        let chain = try TestAppleChain(leafValidUntil: Date().addingTimeInterval(-86_400))
        #expect(await refusal(Self.verifier(chain), try chain.notificationBody()) == .certificateExpired)
    }

    @Test func aLeafOrIntermediateWithoutApplesOIDIsRefused() async throws {
        let noLeafOID = try TestAppleChain(leafOID: false)
        #expect(await refusal(Self.verifier(noLeafOID), try noLeafOID.notificationBody()) == .missingOID)
        let noIntermediateOID = try TestAppleChain(intermediateOID: false)
        #expect(
            await refusal(Self.verifier(noIntermediateOID), try noIntermediateOID.notificationBody()) == .missingOID)
    }

    @Test func anotherBundleIsRefused() async throws {
        let chain = try TestAppleChain()
        #expect(
            await refusal(Self.verifier(chain), try chain.notificationBody(bundleId: "com.example.other")) == .wrongApp)
    }

    @Test func aSandboxNotificationSentToProductionIsRefused() async throws {
        let chain = try TestAppleChain()
        #expect(
            await refusal(Self.verifier(chain), try chain.notificationBody(environment: "Sandbox")) == .wrongEnvironment
        )
        // The same payload is taken by an endpoint configured for the sandbox.
        #expect(
            await refusal(
                Self.verifier(chain, environment: "Sandbox"), try chain.notificationBody(environment: "Sandbox")) == nil
        )
    }

    /// A chain validated once is remembered; what depends on each payload is still checked on each.
    @Test func aRememberedChainStillChecksEachSignatureAndSigningTime() async throws {
        let chain = try TestAppleChain()
        let verifier = Self.verifier(chain)
        #expect(await refusal(verifier, try chain.notificationBody()) == nil)
        #expect(
            await refusal(verifier, try chain.notificationBody(signer: P256.Signing.PrivateKey())) == .forgedSignature)
        #expect(
            await refusal(verifier, try chain.notificationBody(signedDate: Date().addingTimeInterval(400 * 86_400)))
                == .certificateExpired)
        #expect(await refusal(verifier, try chain.notificationBody(bundleId: "com.example.other")) == .wrongApp)
        #expect(await refusal(verifier, try chain.notificationBody()) == nil)
    }

    @Test func aBodyWithoutSignedPayloadIsMalformed() async throws {
        let chain = try TestAppleChain()
        #expect(await refusal(Self.verifier(chain), Array("{\"payload\":1}".utf8)) == .malformed)
        #expect(await refusal(Self.verifier(chain), Array("{\"signedPayload\":\"a.b\"}".utf8)) == .malformed)
    }

    @Test func aSubscriptionBecomesTheNotificationAndAVerifiedPayment() async throws {
        let chain = try TestAppleChain()
        let body = try chain.notificationBody(uuid: "0f7f2e7a-0b6c-4f4e-9e55-1a2b3c4d5e6f")
        let facts = NotificationTranslator.appStore(
            try await Self.verifier(chain).verifyNotification(body: body), raw: body)
        #expect(facts.notificationId == "0f7f2e7a-0b6c-4f4e-9e55-1a2b3c4d5e6f")
        #expect(facts.rawDigest == NotificationFacts.digest(body))
        // The digest itself, against SHA-256's published test vector.
        #expect(
            NotificationFacts.digest(Array("abc".utf8))
                == "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(facts.facts.map(\.typeName) == ["StoreNotificationReceived", "PaymentVerified"])
        guard case .storeNotificationReceived(let n) = facts.facts[0], case .paymentVerified(let p) = facts.facts[1]
        else {
            Issue.record("unexpected facts")
            return
        }
        #expect(n.verification == "signature-ok" && n.type.raw == "SUBSCRIBED" && n.subtype?.raw == "INITIAL_BUY")
        #expect(n.rawDigest == facts.rawDigest && n.app == TestAppleChain.bundleId)
        #expect(p.transactionId == "2000000123456789" && p.originalTransactionId == "2000000100000001")
        #expect(p.price == Money(minorUnits: 999, currency: Currency("USD")!))
        #expect(p.appAccountToken == UUID(uuidString: "7e3fb20b-4cdb-47cc-936d-99d65f608138"))
        #expect(p.rawDigest == facts.rawDigest)
        // The facts pass the catalogue's own validation.
        for f in facts.facts {
            try FactCatalogue.validation().validate(f.newEvent(occurredAt: facts.occurredAt))
        }
    }

    @Test func aRefundBecomesARefundedFact() async throws {
        let chain = try TestAppleChain()
        let body = try chain.notificationBody(type: "REFUND", subtype: nil)
        let facts = NotificationTranslator.appStore(
            try await Self.verifier(chain).verifyNotification(body: body), raw: body)
        #expect(facts.facts.map(\.typeName) == ["StoreNotificationReceived", "Refunded"])
        guard case .refunded(let r) = facts.facts[1] else {
            Issue.record("no Refunded")
            return
        }
        #expect(r.amount == Money(minorUnits: 999, currency: Currency("USD")!) && r.transactionId == "2000000123456789")
    }

    @Test func aRevocationIsTheNotificationAndAStoreRevocation() async throws {
        let chain = try TestAppleChain()
        let body = try chain.notificationBody(type: "REVOKE", subtype: nil)
        let facts = NotificationTranslator.appStore(
            try await Self.verifier(chain).verifyNotification(body: body), raw: body)
        #expect(facts.facts.map(\.typeName) == ["StoreNotificationReceived", "StoreRevoked"])
        guard case .storeNotificationReceived(let n) = facts.facts[0], case .storeRevoked(let r) = facts.facts[1] else {
            return
        }
        #expect(n.type.raw == "REVOKE" && n.transactionId == "2000000123456789" && n.untranslated == nil)
        #expect(
            r.transactionId == "2000000123456789" && r.originalTransactionId == "2000000100000001"
                && r.revocationType == "FAMILY_REVOKE")
    }
}

/// An App Store transaction history's signed transactions, verified as a statement's entries.
@Suite("Apple signed statement entries")
struct AppleStatementEntriesTests {
    func refusal(_ verifier: AppleVerifier, _ entries: [(String, String)]) async -> NotificationRefusal? {
        do {
            _ = try await verifier.verifyEntries(entries)
            return nil
        } catch { return error }
    }

    @Test(
        "every entry verified to the configured root: its digest; a forged, foreign-chained, other-app or sandbox entry is refused by its place"
    )
    func entries() async throws {
        let chain = try TestAppleChain(), other = try TestAppleChain(name: "Other")
        let verifier = AppleVerifierTests.verifier(chain)
        let good = [
            ("signedTransactions[0]", try chain.signedTransaction(id: "1")),
            ("signedTransactions[1]", try chain.signedTransaction(id: "2")),
        ]
        let root = try await verifier.verifyEntries(good)
        #expect(root == AppleVerifier.digest(chain.root) && root == LedgerCore.SHA256.digest(chain.rootDER))

        let foreign = await refusal(
            verifier, good + [("page 2: signedTransactions[0]", try other.signedTransaction(id: "3"))])
        #expect(foreign?.kind == .untrustedChain && foreign?.message.hasPrefix("page 2: signedTransactions[0]") == true)
        // A payload swapped under a valid signature.
        let parts = try chain.signedTransaction(id: "4").split(separator: ".")
        let swapped =
            parts[0] + "." + (try chain.signedTransaction(id: "5", price: 1)).split(separator: ".")[1] + "." + parts[2]
        #expect(await refusal(verifier, [("signedTransactions[0]", String(swapped))])?.kind == .forgedSignature)
        #expect(
            await refusal(
                verifier, [("signedTransactions[0]", try chain.signedTransaction(id: "6", bundleId: "com.other"))])?
                .kind == .wrongApp)
        #expect(
            await refusal(
                verifier, [("signedTransactions[0]", try chain.signedTransaction(id: "7", environment: "Sandbox"))])?
                .kind == .wrongEnvironment)
        #expect(await refusal(verifier, [])?.kind == .malformed)
    }
}
