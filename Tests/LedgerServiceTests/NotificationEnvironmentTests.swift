import _CryptoExtras
import Foundation
import HTTPTypes
import HummingbirdTesting
import LedgerCore
import LedgerNotificationTesting
import LedgerNotifications
import LedgerService
import NIOCore
import Testing
import X509

/// The store endpoints configured as `ledger serve` configures them, from environment variables and
/// files: each store's valid notification is taken; a half configuration is refused, naming the variable.
@Suite("Notification configuration from the environment", .timeLimit(.minutes(2)))
struct NotificationEnvironmentTests {
    static func files(_ contents: [String: String]) throws -> (dir: URL, env: [String: String]) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-env-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        var env: [String: String] = [:]
        for (name, text) in contents {
            let url = dir.appendingPathComponent(name)
            try Data(text.utf8).write(to: url)
            env[name] = url.path
        }
        return (dir, env)
    }

    static func read(_ path: String) throws -> [UInt8] {
        guard let d = FileManager.default.contents(atPath: path) else { throw CocoaError(.fileNoSuchFile) }
        return Array(d)
    }

    @Test func everyStoreConfiguredFromTheEnvironmentTakesItsNotifications() async throws {
        let chain = try TestAppleChain()
        let google = try TestGoogleSigner()
        let wx = try TestWeChat()
        let (dir, paths) = try Self.files([
            "LEDGER_APPSTORE_ROOT_CERT": try chain.root.serializeAsPEM().pemString,
            "LEDGER_GOOGLE_JWKS": try google.jwks(),
            "LEDGER_WECHAT_PLATFORM_CERTS": try wx.platformCertificatePEM(),
            "LEDGER_WECHAT_APIV3_KEY_FILE": String(decoding: wx.apiV3Key, as: UTF8.self) + "\n",
        ])
        defer { try? FileManager.default.removeItem(at: dir) }
        var env = paths
        env["LEDGER_APPSTORE_BUNDLE_ID"] = TestAppleChain.bundleId
        env["LEDGER_GOOGLE_AUDIENCE"] = TestGoogleSigner.audience
        env["LEDGER_GOOGLE_SERVICE_ACCOUNT"] = TestGoogleSigner.serviceAccount
        env["LEDGER_GOOGLE_PACKAGE_NAME"] = TestGoogleSigner.packageName
        env["LEDGER_WECHAT_APPID"] = TestWeChat.appId
        env["LEDGER_WECHAT_MCHID"] = TestWeChat.merchantId
        let config = try NotificationConfiguration(environment: env, readFile: Self.read)
        try await ServiceFixture.with("httpenv", configure: { $0.notifications = config }) { f in
            try await f.test { client in
                let apple = try await client.execute(
                    uri: "/v1/notifications/appstore", method: .post,
                    body: ByteBuffer(bytes: try chain.notificationBody()))
                #expect(apple.status == .ok, "\(apple.text)")
                let push = TestGoogleSigner.pushBody(messageId: "env-1", notification: TestGoogleSigner.subscription(4))
                let g = try await client.execute(
                    uri: "/v1/notifications/googleplay", method: .post,
                    headers: ServiceFixture.bearer(try google.token()), body: ByteBuffer(bytes: push))
                #expect(g.status == .ok, "\(g.text)")
                let n = try wx.notification(id: "EV-env")
                var h = HTTPFields()
                h[HTTPField.Name("Wechatpay-Timestamp")!] = n.headers.timestamp
                h[HTTPField.Name("Wechatpay-Nonce")!] = n.headers.nonce
                h[HTTPField.Name("Wechatpay-Signature")!] = n.headers.signature
                h[HTTPField.Name("Wechatpay-Serial")!] = n.headers.serial
                let w = try await client.execute(
                    uri: "/v1/notifications/wechatpay", method: .post, headers: h, body: ByteBuffer(bytes: n.body))
                #expect(w.status == .ok, "\(w.text)")
            }
            // Apple: notification + payment; Google: notification; WeChat: notification.
            #expect(try await f.rows() == 4)
        }
    }

    @Test func halfAConfigurationIsRefusedNamingTheVariableNotTheKey() throws {
        let wx = try TestWeChat()
        let (dir, paths) = try Self.files([
            "LEDGER_WECHAT_PLATFORM_CERTS": try wx.platformCertificatePEM(),
            "LEDGER_WECHAT_APIV3_KEY_FILE": "short-secret-key",
        ])
        defer { try? FileManager.default.removeItem(at: dir) }
        var env = paths
        #expect { try NotificationConfiguration(environment: env, readFile: Self.read) } throws: { error in
            "\(error)".contains("LEDGER_WECHAT_APPID")
        }
        env["LEDGER_WECHAT_APPID"] = TestWeChat.appId
        env["LEDGER_WECHAT_MCHID"] = TestWeChat.merchantId
        #expect { try NotificationConfiguration(environment: env, readFile: Self.read) } throws: { error in
            "\(error)".contains("LEDGER_WECHAT_APIV3_KEY_FILE") && !"\(error)".contains("short-secret-key")
        }
        #expect {
            try NotificationConfiguration(
                environment: ["LEDGER_APPSTORE_ROOT_CERT": paths["LEDGER_WECHAT_APIV3_KEY_FILE"]!], readFile: Self.read)
        } throws: { error in
            "\(error)".contains("LEDGER_APPSTORE_BUNDLE_ID")
        }
        #expect(try NotificationConfiguration(environment: [:], readFile: Self.read).appStore == nil)
    }

    /// WeChat Pay's public key beside (or instead of) platform certificates, and the Play Developer
    /// API's service account: configured from files, refused when half there, never echoing a key.
    @Test func weChatPublicKeyAndGoogleAPICredentials() throws {
        let wx = try TestWeChat()
        let publicKey = try _RSAKey.make()
        let google = try TestGoogleSigner()
        let account = try _RSAKey.make()
        let credentials = JSONValue.makeObject([
            ("client_email", .string("ledger@example.iam.gserviceaccount.com")),
            ("private_key", .string(account.pemRepresentation)),
        ]).compactText
        let (dir, paths) = try Self.files([
            "LEDGER_WECHAT_PUBLIC_KEY": publicKey.publicKey.pemRepresentation,
            "LEDGER_WECHAT_APIV3_KEY_FILE": String(decoding: wx.apiV3Key, as: UTF8.self),
            "LEDGER_GOOGLE_JWKS": try google.jwks(), "LEDGER_GOOGLE_API_CREDENTIALS": credentials,
            "BAD_CREDENTIALS": #"{"client_email":"x"}"#,
        ])
        defer { try? FileManager.default.removeItem(at: dir) }
        var env = paths
        env["LEDGER_WECHAT_APPID"] = TestWeChat.appId
        env["LEDGER_WECHAT_MCHID"] = TestWeChat.merchantId
        env["LEDGER_GOOGLE_AUDIENCE"] = TestGoogleSigner.audience
        env["LEDGER_GOOGLE_PACKAGE_NAME"] = TestGoogleSigner.packageName
        #expect { try NotificationConfiguration(environment: env, readFile: Self.read) } throws: {
            "\($0)".contains("LEDGER_WECHAT_PUBLIC_KEY_ID")
        }
        env["LEDGER_WECHAT_PUBLIC_KEY_ID"] = TestWeChat.publicKeyId
        let config = try NotificationConfiguration(environment: env, readFile: Self.read)
        #expect(
            config.weChatPay?.configuration.publicKeys.keys.sorted() == [TestWeChat.publicKeyId]
                && config.weChatPay?.configuration.platformKeys.isEmpty == true)
        #expect(config.googlePlayAPI?.configuration.tokenURI.absoluteString == "https://oauth2.googleapis.com/token")
        var bad = env
        bad["LEDGER_GOOGLE_API_CREDENTIALS"] = paths["BAD_CREDENTIALS"]
        #expect { try NotificationConfiguration(environment: bad, readFile: Self.read) } throws: {
            "\($0)".contains("LEDGER_GOOGLE_API_CREDENTIALS")
        }
        bad = env
        bad["LEDGER_GOOGLE_API_URL"] = "ftp://example"
        #expect { try NotificationConfiguration(environment: bad, readFile: Self.read) } throws: {
            "\($0)".contains("LEDGER_GOOGLE_API_URL")
        }
        bad = env
        bad["LEDGER_GOOGLE_JWKS"] = nil
        #expect { try NotificationConfiguration(environment: bad, readFile: Self.read) } throws: { error in
            "\(error)".contains("LEDGER_GOOGLE_JWKS") && !"\(error)".contains("PRIVATE KEY")
        }
    }
}
