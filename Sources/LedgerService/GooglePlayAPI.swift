import _CryptoExtras
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LedgerCore
import LedgerNotifications
import Synchronization

/// The Google Play Developer API, read for the purchase an RTDN names (it carries only a token):
/// `purchases.subscriptions.get`, `purchases.subscriptionsv2.get`, and `purchases.products.get`
/// with `orders.get` of its order, authorized as a service account (an OAuth 2.0 JWT bearer grant,
/// RS256). The access token is kept until a minute before it expires.
public final class GooglePlayAPI: Sendable {
    public struct Configuration: Sendable {
        /// The service account's `client_email`, `private_key` (PEM) and `token_uri`.
        public var clientEmail: String
        public var privateKeyPEM: String
        public var tokenURI: URL
        /// `https://androidpublisher.googleapis.com` (another base for a proxy, or a test's own server).
        public var baseURL: URL
        /// How long one HTTP exchange may wait for the server's next bytes (on Linux the request
        /// timeout restarts with each byte that comes).
        public var timeout: TimeInterval = 10

        public init(clientEmail: String, privateKeyPEM: String, tokenURI: URL, baseURL: URL) {
            self.clientEmail = clientEmail
            self.privateKeyPEM = privateKeyPEM
            self.tokenURI = tokenURI
            self.baseURL = baseURL
        }

        /// From a service account key file (the JSON Google issues); `baseURL` defaults to Google's.
        public init(serviceAccountJSON bytes: [UInt8], baseURL: URL? = nil) throws(APIError) {
            guard let j = try? JSONValue.parse(String(decoding: bytes, as: UTF8.self)),
                let email = j["client_email"]?.stringValue,
                let key = j["private_key"]?.stringValue
            else {
                throw APIError("the service account file is not JSON with client_email and private_key")
            }
            guard (try? _RSA.Signing.PrivateKey(pemRepresentation: key)) != nil else {
                throw APIError("the service account's private_key is not a PEM RSA key")
            }
            let tokenURI =
                j["token_uri"]?.stringValue.flatMap(URL.init(string:)) ?? URL(
                    string: "https://oauth2.googleapis.com/token")!
            self.init(
                clientEmail: email, privateKeyPEM: key, tokenURI: tokenURI,
                baseURL: baseURL ?? URL(string: "https://androidpublisher.googleapis.com")!)
        }
    }

    /// Why a read failed (no secret in it).
    public struct APIError: Error, CustomStringConvertible, Sendable {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    public let configuration: Configuration
    private let session: URLSession
    private let token = Mutex<(value: String, until: Date)?>(nil)

    public init(_ configuration: Configuration) {
        self.configuration = configuration
        let c = URLSessionConfiguration.ephemeral
        c.timeoutIntervalForRequest = configuration.timeout
        session = URLSession(configuration: c)
    }

    /// The subscription purchase `token` of `subscriptionId` in `package`, as the API answers it;
    /// `pricing` (a purchase, renewal or recovery, whose payment is recorded): with its order's total
    /// when only that says what a period that may be introductory was charged.
    public func subscription(
        package: String, subscriptionId: String, token purchaseToken: String, pricing: Bool = true
    ) async throws(APIError) -> GooglePlaySubscriptionRead {
        let json = try await get(
            package, "purchases/subscriptions/\(Self.segment(subscriptionId))/tokens/\(Self.segment(purchaseToken))",
            "purchases.subscriptions.get")
        var read: GooglePlaySubscriptionRead
        do { read = try GooglePlaySubscriptionRead(json: json) } catch {
            throw APIError("purchases.subscriptions.get: \(error.message)")
        }
        // An introductory period: only its order says what was paid.
        if pricing && read.needsOrder {
            let order = try await get(package, "orders/\(Self.segment(read.orderId))", "orders.get")
            guard let total = order["total"].flatMap(GooglePlayProductRead.money) else {
                throw APIError("orders.get: the order lacks a total in a known currency, to a micro")
            }
            read.orderTotal = total
        }
        return read
    }

    /// The product of the subscription's first line item, as `purchases.subscriptionsv2.get` says:
    /// the plan in force after its items changed.
    public func subscriptionProduct(package: String, token purchaseToken: String) async throws(APIError) -> String {
        let json = try await get(
            package, "purchases/subscriptionsv2/tokens/\(Self.segment(purchaseToken))", "purchases.subscriptionsv2.get")
        guard case .array(let items)? = json["lineItems"], let product = items.first?["productId"]?.stringValue else {
            throw APIError("purchases.subscriptionsv2.get: the purchase has no line item with a productId")
        }
        return product
    }

    /// The one-time purchase `token` of `productId`, with what its order says was paid.
    public func product(
        package: String, productId: String, token purchaseToken: String
    ) async throws(APIError) -> GooglePlayProductRead {
        let product = try await get(
            package, "purchases/products/\(Self.segment(productId))/tokens/\(Self.segment(purchaseToken))",
            "purchases.products.get")
        guard let orderId = product["orderId"]?.stringValue else {
            throw APIError("purchases.products.get: the purchase has no orderId")
        }
        let order = try await get(package, "orders/\(Self.segment(orderId))", "orders.get")
        do { return try GooglePlayProductRead(product: product, order: order) } catch {
            throw APIError("\(error.message)")
        }
    }

    /// GET `androidpublisher/v3/applications/<package>/<path>` with the access token.
    private func get(_ package: String, _ path: String, _ what: String) async throws(APIError) -> JSONValue {
        guard
            let url = URL(
                string: "androidpublisher/v3/applications/\(Self.segment(package))/" + path,
                relativeTo: configuration.baseURL)
        else {
            throw APIError("cannot build the URL of \(what)")
        }
        var request = URLRequest(url: url)
        request.setValue("Bearer " + (try await accessToken()), forHTTPHeaderField: "Authorization")
        return try await exchange(request, what)
    }

    /// A path segment, percent-encoded (tokens and ids hold `.` and `-`, never `/`).
    static func segment(_ s: String) -> String {
        s.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? s
    }

    private func accessToken(now: Date = Date()) async throws(APIError) -> String {
        if let t = token.withLock({ $0 }), t.until > now { return t.value }
        var request = URLRequest(url: configuration.tokenURI)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(
            "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(try assertion(now: now))".utf8
        )
        let json = try await exchange(request, "the token endpoint")
        guard let value = json["access_token"]?.stringValue else {
            throw APIError("the token endpoint's answer has no access_token")
        }
        let seconds = json["expires_in"]?.intValue ?? 3600
        token.withLock { $0 = (value, now.addingTimeInterval(TimeInterval(max(0, seconds - 60)))) }
        return value
    }

    /// The service account's signed JWT (RS256) asking for the androidpublisher scope.
    func assertion(now: Date) throws(APIError) -> String {
        let iat = Int64(now.timeIntervalSince1970)
        let header = JSONValue.makeObject([("alg", .string("RS256")), ("typ", .string("JWT"))])
        let claims = JSONValue.makeObject([
            ("iss", .string(configuration.clientEmail)),
            ("scope", .string("https://www.googleapis.com/auth/androidpublisher")),
            ("aud", .string(configuration.tokenURI.absoluteString)), ("iat", .int(iat)), ("exp", .int(iat + 3600)),
        ])
        let input =
            Base64.urlEncoded(Array(header.compactText.utf8)) + "." + Base64.urlEncoded(Array(claims.compactText.utf8))
        do {
            let key = try _RSA.Signing.PrivateKey(pemRepresentation: configuration.privateKeyPEM)
            let signature = try key.signature(for: Array(input.utf8), padding: .insecurePKCS1v1_5)
            return input + "." + Base64.urlEncoded(Array(signature.rawRepresentation))
        } catch {
            throw APIError("cannot sign the service account's assertion")
        }
    }

    private func exchange(_ request: URLRequest, _ what: String) async throws(APIError) -> JSONValue {
        let data: Data, response: URLResponse
        do { (data, response) = try await session.exchange(request) } catch {
            throw APIError("\(what) could not be reached: \(error.localizedDescription)")
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else { throw APIError("\(what) answered HTTP \(status)") }
        guard let json = try? JSONValue.parse(String(decoding: data, as: UTF8.self)) else {
            throw APIError("\(what) answered something that is not JSON")
        }
        return json
    }
}
