import _CryptoExtras
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerCore
import LedgerNotificationTesting
import LedgerNotifications
import LedgerService
import LedgerTesting
import Logging
import NIOCore
import Synchronization
import Testing

/// A Google Play Developer API of the test's own on loopback: a token endpoint that checks the
/// service account's signed assertion, and `purchases.subscriptions.get` answering from a table.
final class FakePlayAPI: Sendable {
    static let accessToken = "ya29.test-access-token"
    private let keyPEM: String
    var key: _RSA.Signing.PrivateKey { try! _RSA.Signing.PrivateKey(pemRepresentation: keyPEM) }
    /// Purchase token -> the answer (any other token: HTTP 500).
    let purchases: [String: JSONValue]
    let reads = Mutex(0)

    init(key: _RSA.Signing.PrivateKey, purchases: [String: JSONValue]) {
        keyPEM = key.pemRepresentation
        self.purchases = purchases
    }

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        let publicKey = key.publicKey
        router.post("/token") { request, context -> Response in
            let form = String(buffer: try await request.body.collect(upTo: 1 << 16))
            guard form.hasPrefix("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion="),
                let jwt = form.split(separator: "=").last.map(String.init)
            else { return Response(status: .badRequest) }
            let parts = jwt.split(separator: ".").map(String.init)
            guard parts.count == 3, let sig = Self.b64url(parts[2]), let claims = Self.b64url(parts[1]),
                publicKey.isValidSignature(
                    _RSA.Signing.RSASignature(rawRepresentation: sig), for: Array((parts[0] + "." + parts[1]).utf8),
                    padding: .insecurePKCS1v1_5),
                let c = try? JSONValue.parse(String(decoding: claims, as: UTF8.self)),
                c["scope"]?.stringValue == "https://www.googleapis.com/auth/androidpublisher",
                c["iss"]?.stringValue == "ledger@example.iam.gserviceaccount.com"
            else { return Response(status: .unauthorized) }
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(
                    byteBuffer: ByteBuffer(
                        string: #"{"access_token":"\#(Self.accessToken)","expires_in":3599,"token_type":"Bearer"}"#)))
        }
        // Each read: the access token checked, then the answer the table holds for the path's last
        // parameter (a token or an order id; the v2 read answers one plan for any token).
        let v2 = JSONValue.makeObject([
            ("kind", .string("androidpublisher#subscriptionPurchaseV2")),
            (
                "lineItems",
                .array([
                    .makeObject([("productId", .string("vip_year")), ("expiryTime", .string("2026-05-01T00:00:00Z"))])
                ])
            ),
        ])
        for (path, key, fixed) in [
            ("purchases/subscriptions/:subscription/tokens/:token", "token", nil),
            ("purchases/products/:product/tokens/:token", "token", nil),
            ("purchases/subscriptionsv2/tokens/:token", "token", v2), ("orders/:order", "order", nil),
        ] as [(String, String, JSONValue?)] {
            router.get(RouterPath("/androidpublisher/v3/applications/:package/" + path)) {
                [self] request, context -> Response in
                guard request.headers[.authorization] == "Bearer " + Self.accessToken else {
                    return Response(status: .unauthorized)
                }
                self.reads.withLock { $0 += 1 }
                guard let answer = fixed ?? context.parameters.get(key).flatMap({ self.purchases[$0] }) else {
                    return Response(status: .internalServerError)
                }
                return Response(
                    status: .ok, headers: [.contentType: "application/json"],
                    body: .init(byteBuffer: ByteBuffer(string: answer.compactText)))
            }
        }
        return router
    }

    static func b64url(_ s: String) -> [UInt8]? { Base64.decode(s, url: true) }

    /// The API's client, as the service account this API knows, with the API served on `port`.
    func client(port: Int) throws -> GooglePlayAPI {
        let credentials = JSONValue.makeObject([
            ("type", .string("service_account")),
            ("client_email", .string("ledger@example.iam.gserviceaccount.com")),
            ("private_key", .string(key.pemRepresentation)),
            ("token_uri", .string("http://127.0.0.1:\(port)/token")),
        ])
        return GooglePlayAPI(
            try GooglePlayAPI.Configuration(
                serviceAccountJSON: Array(credentials.compactText.utf8),
                baseURL: URL(string: "http://127.0.0.1:\(port)/")!
            ))
    }

    /// Serves the API on a free loopback port while `body` runs.
    func serving<T: Sendable>(_ body: @Sendable (Int) async throws -> T) async throws -> T {
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { continuation.yield($0.localAddress?.port ?? 0) }, logger: Logger(label: "fake-play-api"))
        let running = Task { try await app.runService() }
        defer { running.cancel() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CancellationError() }
        return try await body(port)
    }
}

@Suite("Google Play Developer API reads", .timeLimit(.minutes(2)))
struct GooglePlayAPITests {
    static func read(order: String, micros: String) -> JSONValue {
        .makeObject([
            ("startTimeMillis", .string("1774944000000")), ("expiryTimeMillis", .string("1777536000000")),
            ("priceCurrencyCode", .string("JPY")),
            ("priceAmountMicros", .string(micros)), ("orderId", .string(order)), ("purchaseType", .int(0)),
            ("acknowledgementState", .int(0)),
        ])
    }

    @Test func subscriptionNotificationsBecomeVerifiedPaymentsFromTheirRead() async throws {
        let google = try TestGoogleSigner()
        let fake = FakePlayAPI(
            key: try _RSA.Signing.PrivateKey(keySize: .bits2048),
            purchases: [
                "tok-new": Self.read(order: "GPA.3301-0000-0000-00001", micros: "1200000000"),
                "tok-renewed": Self.read(order: "GPA.3301-0000-0000-00002..0", micros: "1200500000"),
                // Bought at an introductory price: what was paid is the order's total (tax included).
                "tok-intro": .makeObject([
                    ("startTimeMillis", .string("1774944000000")), ("expiryTimeMillis", .string("1777536000000")),
                    ("priceCurrencyCode", .string("JPY")), ("priceAmountMicros", .string("1200000000")),
                    ("orderId", .string("GPA.3301-0000-0000-00011")), ("paymentState", .int(1)),
                    (
                        "introductoryPriceInfo",
                        .makeObject([
                            ("introductoryPriceCurrencyCode", .string("JPY")),
                            ("introductoryPriceAmountMicros", .string("100000000")),
                            ("introductoryPriceCycles", .int(1)), ("introductoryPricePeriod", .string("P1M")),
                        ])
                    ),
                ]),
                "GPA.3301-0000-0000-00011": .makeObject([
                    (
                        "total",
                        .makeObject([("currencyCode", .string("JPY")), ("units", .string("110")), ("nanos", .int(0))])
                    )
                ]),
                "tok-coins": .makeObject([
                    ("purchaseTimeMillis", .string("1774944000000")), ("orderId", .string("GPA.3301-0000-0000-00009")),
                    ("quantity", .int(1)), ("purchaseState", .int(0)),
                ]),
                "GPA.3301-0000-0000-00009": .makeObject([
                    (
                        "total",
                        .makeObject([("currencyCode", .string("JPY")), ("units", .string("160")), ("nanos", .int(0))])
                    )
                ]),
            ])
        try await fake.serving { port in
            let api = try fake.client(port: port)
            try await ServiceFixture.with(
                "httpplayapi",
                configure: {
                    $0.notifications.googlePlay = GooglePlayVerifier(
                        .init(
                            keys: google.publicKeys, audience: TestGoogleSigner.audience,
                            serviceAccount: TestGoogleSigner.serviceAccount, packageName: TestGoogleSigner.packageName))
                    $0.notifications.googlePlayAPI = api
                }
            ) { f in
                try await f.test { client in
                    func push(_ id: String, _ code: Int64, _ token: String) async throws -> TestResponse {
                        try await client.execute(
                            uri: "/v1/notifications/googleplay", method: .post,
                            headers: ServiceFixture.bearer(try google.token()),
                            body: ByteBuffer(
                                bytes: TestGoogleSigner.pushBody(
                                    messageId: id, notification: TestGoogleSigner.subscription(code, token: token))))
                    }
                    let bought = try await push("m-1", 4, "tok-new")
                    #expect(
                        bought.status == .ok && bought.json?["appended"]?.intValue == 2
                            && bought.json?["untranslated"]?.isNull == true, "\(bought.text)")
                    let intro = try await push("m-6", 4, "tok-intro")
                    #expect(
                        intro.status == .ok && intro.json?["appended"]?.intValue == 2
                            && intro.json?["untranslated"]?.isNull == true, "\(intro.text)")
                    // In grace, nothing is priced: the subscription is read, its order is not.
                    let grace = try await push("m-7", 6, "tok-intro")
                    #expect(
                        grace.status == .ok && grace.json?["appended"]?.intValue == 2
                            && grace.json?["untranslated"]?.isNull == true, "\(grace.text)")
                    let renewed = try await push("m-2", 2, "tok-renewed")
                    #expect(renewed.status == .ok && renewed.json?["appended"]?.intValue == 3, "\(renewed.text)")
                    let oneTime = JSONValue.makeObject([
                        ("version", .string("1.0")), ("packageName", .string(TestGoogleSigner.packageName)),
                        ("eventTimeMillis", .string("1774944900000")),
                        (
                            "oneTimeProductNotification",
                            .makeObject([
                                ("version", .string("1.0")), ("notificationType", .int(1)),
                                ("purchaseToken", .string("tok-coins")), ("sku", .string("coins_160")),
                            ])
                        ),
                    ])
                    let coins = try await client.execute(
                        uri: "/v1/notifications/googleplay", method: .post,
                        headers: ServiceFixture.bearer(try google.token()),
                        body: ByteBuffer(bytes: TestGoogleSigner.pushBody(messageId: "m-4", notification: oneTime)))
                    #expect(
                        coins.status == .ok && coins.json?["appended"]?.intValue == 2
                            && coins.json?["untranslated"]?.isNull == true, "\(coins.text)")
                    let changed = try await push("m-5", 17, "tok-new")
                    #expect(
                        changed.status == .ok && changed.json?["appended"]?.intValue == 2
                            && changed.json?["untranslated"]?.isNull == true, "\(changed.text)")
                    // The API failing: kept, answered 200, awaiting the verification.
                    let broken = try await push("m-3", 4, "tok-broken")
                    #expect(
                        broken.status == .ok && broken.json?["untranslated"]?.stringValue?.contains("HTTP 500") == true,
                        "\(broken.text)")
                    let log = try await client.execute(
                        uri: "/v1/events?from=1", method: .get, headers: ServiceFixture.bearer(f.readToken))
                    #expect(
                        log.text.contains("\"transactionId\": \"GPA.3301-0000-0000-00001\"")
                            && log.text.contains("\"amount\": 1200"))
                    // 1200.5 yen, exactly.
                    #expect(log.text.contains("\"exact\": \"1200.5\""))
                    // The introductory month at its order's total, 110 yen, not its net 100 nor the list 1,200.
                    #expect(log.text.contains("\"amount\": 110, \"currency\": \"JPY\""), "\(log.text)")
                }
            }
            // One token for all nine reads (five subscriptions and one's order, a product purchase and its
            // order, a v2 subscription).
            #expect(fake.reads.withLock { $0 } == 9)
        }
    }
}
