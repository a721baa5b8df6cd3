import Crypto
import Foundation
import LedgerCore
import SwiftASN1
import Synchronization
@_spi(FixedExpiryValidationTime) import X509

/// Verifies App Store Server Notifications V2 and the JWS they carry (signed transaction and
/// renewal info): ES256 over `header.payload` by the leaf of the `x5c` chain; the chain of three
/// certificates leads to a configured root (Apple Root CA - G3 in production); the intermediate
/// carries Apple's OID 1.2.840.113635.100.6.2.1 and the leaf 1.2.840.113635.100.6.11.1; every
/// certificate is valid at the payload's `signedDate`; the bundle id and environment are the
/// configured ones.
public struct AppleVerifier: Sendable {
    public struct Configuration: Sendable {
        /// DER certificates the chain must lead to.
        public var roots: [Certificate]
        public var bundleId: String
        /// `Production` or `Sandbox` (Apple's spelling).
        public var environment: String

        public init(roots: [Certificate], bundleId: String, environment: String = "Production") {
            self.roots = roots
            self.bundleId = bundleId
            self.environment = environment
        }

        /// Reads PEM or DER root certificates.
        public static func roots(fromFile bytes: [UInt8]) throws -> [Certificate] {
            let text = String(decoding: bytes, as: UTF8.self)
            if text.contains("-----BEGIN CERTIFICATE-----") {
                return try PEMDocument.parseMultiple(pemString: text).map { try Certificate(pemDocument: $0) }
            }
            return [try Certificate(derEncoded: bytes)]
        }
    }

    public static let intermediateOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]
    public static let leafOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]

    public let configuration: Configuration
    /// Chains already validated to a configured root (Apple signs with few chains): their parsed
    /// certificates. What depends on time (validity at each payload's signedDate) is checked on
    /// every payload; signatures, constraints and the path to the root do not change.
    private let validated = ValidatedChains()

    public init(_ configuration: Configuration) { self.configuration = configuration }

    /// A verified notification: the decoded payload, its signed transaction and renewal info.
    /// What a verified notification says: its payload and its signed transaction and renewal info.
    public struct Verified: Sendable {
        public var payload: JSONValue
        public var transaction: JSONValue?
        public var renewal: JSONValue?
        public var signedDate: Date

        /// What ``AppleVerifier/verifyNotification(body:)`` returns; built directly by the simulator,
        /// which speaks for the store, to run its notifications through the same translation.
        public init(payload: JSONValue, transaction: JSONValue?, renewal: JSONValue?, signedDate: Date) {
            self.payload = payload
            self.transaction = transaction
            self.renewal = renewal
            self.signedDate = signedDate
        }
    }

    /// Verifies the body `{"signedPayload": "..."}`.
    public func verifyNotification(body: [UInt8]) async throws(NotificationRefusal) -> Verified {
        guard let value = try? JSONValue.parse(String(decoding: body, as: UTF8.self)),
            let signed = value["signedPayload"]?.stringValue
        else {
            throw NotificationRefusal(.malformed, "the body is not a JSON object with a signedPayload string")
        }
        let (payload, signedDate) = try await verify(signed, what: "signedPayload")
        guard let data = payload["data"], case .object = data else {
            // Summary notifications (e.g. RENEWAL_EXTENSION summary) carry `summary` instead of `data`.
            try checkApp(payload["summary"] ?? payload, what: "signedPayload")
            return Verified(payload: payload, transaction: nil, renewal: nil, signedDate: signedDate)
        }
        try checkApp(data, what: "signedPayload.data")
        var transaction: JSONValue?
        var renewal: JSONValue?
        if let t = data["signedTransactionInfo"]?.stringValue {
            transaction = try await verify(t, what: "signedTransactionInfo").payload
            if let b = transaction?["bundleId"]?.stringValue, b != configuration.bundleId {
                throw NotificationRefusal(
                    .wrongApp,
                    "signedTransactionInfo is for bundle \(Echo.quoted(b, limit: 80)), not the configured one")
            }
        }
        if let r = data["signedRenewalInfo"]?.stringValue {
            renewal = try await verify(r, what: "signedRenewalInfo").payload
        }
        return Verified(payload: payload, transaction: transaction, renewal: renewal, signedDate: signedDate)
    }

    private func checkApp(_ data: JSONValue, what: String) throws(NotificationRefusal) {
        let bundle = data["bundleId"]?.stringValue
        if bundle != configuration.bundleId {
            throw NotificationRefusal(
                .wrongApp, "\(what) is for bundle \(Echo.quoted(bundle ?? "(none)", limit: 80)), not the configured one"
            )
        }
        let environment = data["environment"]?.stringValue
        if environment != configuration.environment {
            throw NotificationRefusal(
                .wrongEnvironment,
                "\(what) is from environment \(Echo.quoted(environment ?? "(none)", limit: 40)); this endpoint takes \(configuration.environment)"
            )
        }
    }

    /// Verifies one JWS signed by Apple's chain; returns its payload and its signedDate.
    public func verify(
        _ text: String, what: String
    ) async throws(NotificationRefusal) -> (payload: JSONValue, signedDate: Date) {
        let (payload, signedDate, _) = try await verifyChain(text, what: what)
        return (payload, signedDate)
    }

    /// Verifies the signed entries of a statement (an App Store history's `signedTransactions`):
    /// each a JWS of Apple's chain to a configured root, for the configured bundle id and
    /// environment, all to one root. `place` names the entry in errors. Returns `sha256:<hex>` of
    /// that root certificate's DER, which the statement's record names.
    public func verifyEntries(
        _ entries: [(place: String, jws: String)],
        progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil
    ) async throws(NotificationRefusal) -> String {
        var root: String?
        for (done, (place, jws)) in entries.enumerated() {
            if let progress, done % 256 == 0 { progress(done, entries.count) }
            let (payload, _, chain) = try await verifyChain(jws, what: place)
            try checkApp(payload, what: place)
            let digest = Self.digest(chain[chain.count - 1])
            if let root, root != digest {
                throw NotificationRefusal(
                    .untrustedChain, "\(place): signed by a chain to another configured root than the entries before it"
                )
            }
            root = digest
        }
        guard let root else { throw NotificationRefusal(.malformed, "no signed entries to verify") }
        progress?(entries.count, entries.count)
        return root
    }

    /// `sha256:<hex>` of a certificate's DER encoding.
    public static func digest(_ certificate: Certificate) -> String {
        var serializer = DER.Serializer()
        do { try serializer.serialize(certificate) } catch {
            preconditionFailure("a parsed certificate serializes: \(error)")
        }
        return LedgerCore.SHA256.digest(serializer.serializedBytes)
    }

    /// One JWS; also returns the chain it was validated along (leaf, intermediate, configured root).
    private func verifyChain(
        _ text: String, what: String
    ) async throws(NotificationRefusal) -> (payload: JSONValue, signedDate: Date, chain: [Certificate]) {
        let jws = try CompactJWS(text, what: what)
        guard jws.header["alg"]?.stringValue == "ES256" else {
            throw NotificationRefusal(.forgedSignature, "\(what): alg must be ES256")
        }
        guard case .array(let x5c)? = jws.header["x5c"], x5c.count == 3 else {
            throw NotificationRefusal(
                .untrustedChain, "\(what): x5c must hold three certificates (leaf, intermediate, root)")
        }
        let texts = x5c.map { $0.stringValue ?? "" }
        let known = validated.chain(texts)
        var chain: [Certificate] = known ?? []
        if known == nil {
            for (i, b64) in texts.enumerated() {
                guard let der = Base64.decode(b64, url: false), let cert = try? Certificate(derEncoded: der) else {
                    throw NotificationRefusal(.untrustedChain, "\(what): x5c[\(i)] is not a DER certificate in base64")
                }
                chain.append(cert)
            }
        }
        guard let ms = jws.payload["signedDate"]?.intValue else {
            throw NotificationRefusal(.malformed, "\(what): signedDate (milliseconds) is missing")
        }
        let signedDate = Date(timeIntervalSince1970: Double(ms) / 1000)
        try checkOIDs(leaf: chain[0], intermediate: chain[1], what: what)
        for (i, cert) in chain.enumerated() where signedDate < cert.notValidBefore || signedDate > cert.notValidAfter {
            throw NotificationRefusal(
                .certificateExpired,
                "\(what): x5c[\(i)] is not valid at signedDate \(ISO8601DateFormatter().string(from: signedDate))")
        }
        if known == nil {
            // The path's root is the configured one (x5c's own root is only a copy of it).
            chain = try await checkChain(leaf: chain[0], intermediate: chain[1], at: signedDate, what: what)
            validated.remember(texts, chain)
        }
        guard let key = P256.Signing.PublicKey(chain[0].publicKey),
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: jws.signature),
            key.isValidSignature(signature, for: jws.signingInput)
        else {
            throw NotificationRefusal(
                .forgedSignature, "\(what): the ES256 signature does not verify with the leaf certificate's key")
        }
        return (jws.payload, signedDate, chain)
    }

    private func checkOIDs(leaf: Certificate, intermediate: Certificate, what: String) throws(NotificationRefusal) {
        if intermediate.extensions[oid: Self.intermediateOID] == nil {
            throw NotificationRefusal(
                .missingOID, "\(what): the intermediate certificate lacks Apple's OID 1.2.840.113635.100.6.2.1")
        }
        if leaf.extensions[oid: Self.leafOID] == nil {
            throw NotificationRefusal(
                .missingOID, "\(what): the leaf certificate lacks Apple's OID 1.2.840.113635.100.6.11.1")
        }
    }

    /// The validated path: leaf, intermediate, configured root.
    private func checkChain(
        leaf: Certificate, intermediate: Certificate, at time: Date, what: String
    ) async throws(NotificationRefusal) -> [Certificate] {
        var verifier = Verifier(rootCertificates: CertificateStore(configuration.roots)) {
            RFC5280Policy(fixedExpiryValidationTime: time)
            AppleMarkerPolicy()
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate]))
        guard case .validCertificate(let path) = result, path.count == 3 else {
            throw NotificationRefusal(
                .untrustedChain, "\(what): the x5c chain does not lead to a configured root certificate")
        }
        return Array(path)
    }
}

/// The chains a verifier has validated to its roots, by their x5c text (at most 64: Apple signs with few).
final class ValidatedChains: Sendable {
    private let chains = Mutex<[[String]: [Certificate]]>([:])

    func chain(_ x5c: [String]) -> [Certificate]? { chains.withLock { $0[x5c] } }

    func remember(_ x5c: [String], _ chain: [Certificate]) {
        chains.withLock { chains in
            if chains.count >= 64 { chains.removeAll() }
            chains[x5c] = chain
        }
    }
}

/// Apple's marker extensions are not critical; this policy only states that the verifier knows them.
struct AppleMarkerPolicy: VerifierPolicy {
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [AppleVerifier.intermediateOID, AppleVerifier.leafOID]
    mutating func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        .meetsPolicy
    }
}
