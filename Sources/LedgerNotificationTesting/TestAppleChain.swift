import _CryptoExtras
import Crypto
import Foundation
import LedgerCore
import LedgerNotifications
import SwiftASN1
import X509

/// An Apple-shaped certificate chain that tests make themselves (never real keys): root,
/// intermediate and leaf with Apple's OIDs, and the signed transactions, history pages and
/// notifications it signs. Google's signer is `TestGoogleSigner`, WeChat Pay's keys `TestWeChat`.
public struct TestAppleChain: Sendable {
    // The keys as bytes (swift-crypto's keys are not Sendable).
    private let leafKeyBytes: Data
    public var leafKey: P256.Signing.PrivateKey { try! P256.Signing.PrivateKey(rawRepresentation: leafKeyBytes) }
    public let root: Certificate
    public let intermediate: Certificate
    public let leaf: Certificate

    public static let bundleId = "com.example.ledgertest"

    /// A chain valid from a year ago to a year ahead; `leafValidUntil` ends the leaf earlier, and the
    /// OIDs can be left out.
    public init(
        leafValidUntil: Date? = nil, intermediateOID: Bool = true, leafOID: Bool = true, name: String = "Test"
    ) throws {
        let rootKey = P256.Signing.PrivateKey()
        let intermediateKey = P256.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        leafKeyBytes = leafKey.rawRepresentation
        let now = Date()
        let from = now.addingTimeInterval(-365 * 86_400)
        let until = now.addingTimeInterval(365 * 86_400)
        let rootName = try DistinguishedName { CommonName("\(name) Root CA - G3") }
        let intermediateName = try DistinguishedName { CommonName("\(name) Worldwide Developer Relations") }
        let leafName = try DistinguishedName {
            CommonName("\(name) Prod ECC Mac App Store and iTunes Store Receipt Signing")
        }
        let ca = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
            Critical(KeyUsage(keyCertSign: true, cRLSign: true))
        }
        root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey), notValidBefore: from,
            notValidAfter: until,
            issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA256, extensions: ca,
            issuerPrivateKey: .init(rootKey))
        var intermediateExtensions = ca
        if intermediateOID {
            try intermediateExtensions.append(
                Certificate.Extension(oid: AppleVerifier.intermediateOID, critical: false, value: [0x05, 0x00]))
        }
        intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey), notValidBefore: from,
            notValidAfter: until, issuer: rootName, subject: intermediateName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: intermediateExtensions, issuerPrivateKey: .init(rootKey))
        var leafExtensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
        }
        if leafOID {
            try leafExtensions.append(
                Certificate.Extension(oid: AppleVerifier.leafOID, critical: false, value: [0x05, 0x00]))
        }
        leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey), notValidBefore: from,
            notValidAfter: leafValidUntil ?? until, issuer: intermediateName, subject: leafName,
            signatureAlgorithm: .ecdsaWithSHA256, extensions: leafExtensions, issuerPrivateKey: .init(intermediateKey))
    }

    /// A compact JWS of `payload` with this chain in x5c, signed by the leaf (or by `signer`: a forgery).
    public func sign(_ payload: JSONValue, signer: P256.Signing.PrivateKey? = nil) throws -> String {
        func der(_ c: Certificate) throws -> String {
            var s = DER.Serializer()
            try s.serialize(c)
            return Data(s.serializedBytes).base64EncodedString()
        }
        let header = JSONValue.makeObject([
            ("alg", .string("ES256")),
            ("x5c", .array([.string(try der(leaf)), .string(try der(intermediate)), .string(try der(root))])),
        ])
        let input = Self.b64url(Array(header.compactText.utf8)) + "." + Self.b64url(Array(payload.compactText.utf8))
        let signature = try (signer ?? leafKey).signature(for: Array(input.utf8))
        return input + "." + Self.b64url(Array(signature.rawRepresentation))
    }

    public static func b64url(_ bytes: [UInt8]) -> String { Base64.urlEncoded(bytes) }

    /// The root certificate's DER bytes (what LEDGER_APPSTORE_ROOT_CERT may name).
    public var rootDER: [UInt8] {
        var s = DER.Serializer()
        try! s.serialize(root)
        return s.serializedBytes
    }

    /// A signed transaction as the App Store Server API lists it in a transaction history
    /// (`price` in milliunits); `extra` adds or replaces members.
    public func signedTransaction(
        id: String, price: Int64 = 4990, currency: String = "USD", purchased: Date = Date(),
        bundleId: String = TestAppleChain.bundleId, environment: String = "Production",
        extra: [(String, JSONValue)] = []
    ) throws -> String {
        let ms = Int64(purchased.timeIntervalSince1970 * 1000)
        let base: [(String, JSONValue)] = [
            ("transactionId", .string(id)), ("originalTransactionId", .string(id)), ("bundleId", .string(bundleId)),
            ("productId", .string("coins_60")), ("purchaseDate", .int(ms)), ("originalPurchaseDate", .int(ms)),
            ("quantity", .int(1)),
            ("type", .string("Consumable")), ("inAppOwnershipType", .string("PURCHASED")),
            ("signedDate", .int(ms + 1000)),
            ("environment", .string(environment)), ("transactionReason", .string("PURCHASE")),
            ("storefront", .string("USA")),
            ("storefrontId", .string("143441")), ("price", .int(price)), ("currency", .string(currency)),
        ]
        return try sign(.makeObject(base.filter { b in !extra.contains { $0.0 == b.0 } } + extra))
    }

    /// One page of a Get Transaction History answer holding `signed`.
    public static func historyPage(
        _ signed: [String], bundleId: String = TestAppleChain.bundleId, environment: String = "Production",
        hasMore: Bool = false
    ) -> String {
        JSONValue.makeObject([
            ("revision", .string("rev-\(signed.count)")), ("bundleId", .string(bundleId)),
            ("appAppleId", .int(1234567890)),
            ("environment", .string(environment)), ("hasMore", .bool(hasMore)),
            ("signedTransactions", .array(signed.map(JSONValue.string))),
        ]).compactText
    }

    /// A recorded-shape App Store Server Notification V2 body: `{"signedPayload": ...}` with a signed transaction.
    public func notificationBody(
        type: String = "SUBSCRIBED", subtype: String? = "INITIAL_BUY", uuid: String = UUID().uuidString.lowercased(),
        bundleId: String = TestAppleChain.bundleId, environment: String = "Production",
        transactionId: String = "2000000123456789", signedDate: Date = Date(),
        signer: P256.Signing.PrivateKey? = nil, transaction extra: [(String, JSONValue)] = [],
        renewal renewalExtra: [(String, JSONValue)] = [], withTransaction: Bool = true,
        withUUID: Bool = true
    ) throws -> [UInt8] {
        let ms = Int64(signedDate.timeIntervalSince1970 * 1000)
        var tx: [(String, JSONValue)] = [
            ("transactionId", .string(transactionId)), ("originalTransactionId", .string("2000000100000001")),
            ("webOrderLineItemId", .string("2000000011111111")), ("bundleId", .string(bundleId)),
            ("productId", .string("vip_month")),
            ("subscriptionGroupIdentifier", .string("21000001")), ("purchaseDate", .int(ms - 60_000)),
            ("originalPurchaseDate", .int(ms - 60_000)),
            ("expiresDate", .int(ms + 30 * 86_400_000)), ("quantity", .int(1)),
            ("type", .string("Auto-Renewable Subscription")),
            ("appAccountToken", .string("7e3fb20b-4cdb-47cc-936d-99d65f608138")),
            ("inAppOwnershipType", .string("PURCHASED")),
            ("signedDate", .int(ms)), ("environment", .string(environment)), ("transactionReason", .string("PURCHASE")),
            ("storefront", .string("USA")), ("price", .int(9990)), ("currency", .string("USD")),
        ]
        if type == "REFUND" || type == "REVOKE" {
            tx.append(("revocationDate", .int(ms - 1000)))
            tx.append(("revocationReason", .int(0)))
        }
        /// `extra` replaces members of the same name, and adds the rest; `.null` removes one.
        func merged(_ base: [(String, JSONValue)], _ extra: [(String, JSONValue)]) -> JSONValue {
            var out = base.filter { b in !extra.contains { $0.0 == b.0 } }
            out += extra.filter { !$0.1.isNull }
            return .makeObject(out)
        }
        let renewal = merged(
            [
                ("originalTransactionId", .string("2000000100000001")), ("autoRenewProductId", .string("vip_month")),
                ("productId", .string("vip_month")), ("autoRenewStatus", .int(1)), ("signedDate", .int(ms)),
                ("environment", .string(environment)),
            ], renewalExtra)
        var data: [(String, JSONValue)] = [
            ("appAppleId", .int(1234567890)), ("bundleId", .string(bundleId)), ("bundleVersion", .string("42")),
            ("environment", .string(environment)),
        ]
        if withTransaction {
            data.append(("signedTransactionInfo", .string(try sign(merged(tx, extra), signer: signer))))
        }
        data += [("signedRenewalInfo", .string(try sign(renewal, signer: signer))), ("status", .int(1))]
        var payload: [(String, JSONValue)] = [("notificationType", .string(type))]
        if withUUID { payload.append(("notificationUUID", .string(uuid))) }
        payload += [("version", .string("2.0")), ("signedDate", .int(ms)), ("data", .makeObject(data))]
        if let subtype { payload.append(("subtype", .string(subtype))) }
        let body = JSONValue.makeObject([("signedPayload", .string(try sign(.makeObject(payload), signer: signer)))])
        return Array(body.compactText.utf8)
    }
}
