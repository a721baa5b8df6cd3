import _CryptoExtras
import Foundation
import LedgerCore
import LedgerNotifications
import X509

extension NotificationConfiguration {
    /// A configuration problem, naming the variable (never a key's content).
    public struct Problem: Error, CustomStringConvertible, Sendable {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    /// The App Store verifier the environment configures (`LEDGER_APPSTORE_ROOT_CERT`,
    /// `LEDGER_APPSTORE_BUNDLE_ID`, `LEDGER_APPSTORE_ENVIRONMENT`), or nil when no root is set:
    /// what the service verifies notifications with, and the statement import signed histories.
    public static func appStore(
        environment env: [String: String], readFile: (String) throws -> [UInt8]
    ) throws -> AppleVerifier? {
        func value(_ name: String) -> String? { env[name].flatMap { $0.isEmpty ? nil : $0 } }
        guard let path = value("LEDGER_APPSTORE_ROOT_CERT") else { return nil }
        let root: [UInt8]
        do { root = try readFile(path) } catch {
            throw Problem("LEDGER_APPSTORE_ROOT_CERT: cannot read \(Echo.quoted(path))")
        }
        guard let bundle = value("LEDGER_APPSTORE_BUNDLE_ID") else {
            throw Problem("LEDGER_APPSTORE_ROOT_CERT is set: set LEDGER_APPSTORE_BUNDLE_ID too")
        }
        let roots: [Certificate]
        do { roots = try AppleVerifier.Configuration.roots(fromFile: root) } catch {
            throw Problem("LEDGER_APPSTORE_ROOT_CERT is not a PEM or DER certificate")
        }
        let environment = value("LEDGER_APPSTORE_ENVIRONMENT") ?? "Production"
        guard ["Production", "Sandbox"].contains(environment) else {
            throw Problem("LEDGER_APPSTORE_ENVIRONMENT must be Production or Sandbox")
        }
        return AppleVerifier(.init(roots: roots, bundleId: bundle, environment: environment))
    }

    /// The store endpoints configured by environment variables (docs/http.md lists them); a store whose
    /// first variable is unset is not configured. `readFile` reads a named file's bytes.
    public init(environment env: [String: String], readFile: (String) throws -> [UInt8]) throws {
        func value(_ name: String) -> String? { env[name].flatMap { $0.isEmpty ? nil : $0 } }
        func file(_ name: String) throws -> [UInt8]? {
            guard let path = value(name) else { return nil }
            do { return try readFile(path) } catch { throw Problem("\(name): cannot read \(Echo.quoted(path))") }
        }
        self.init()
        appStore = try Self.appStore(environment: env, readFile: readFile)
        if let jwks = try file("LEDGER_GOOGLE_JWKS") {
            guard let audience = value("LEDGER_GOOGLE_AUDIENCE"), let package = value("LEDGER_GOOGLE_PACKAGE_NAME")
            else {
                throw Problem(
                    "LEDGER_GOOGLE_JWKS is set: set LEDGER_GOOGLE_AUDIENCE and LEDGER_GOOGLE_PACKAGE_NAME too")
            }
            let keys: [String: _RSA.Signing.PublicKey]
            do { keys = try JWKS.rsaKeys(jwks) } catch { throw Problem("LEDGER_GOOGLE_JWKS: \(error)") }
            googlePlay = GooglePlayVerifier(
                .init(
                    keys: keys, audience: audience, serviceAccount: value("LEDGER_GOOGLE_SERVICE_ACCOUNT"),
                    packageName: package))
        }
        if let credentials = try file("LEDGER_GOOGLE_API_CREDENTIALS") {
            guard googlePlay != nil else {
                throw Problem(
                    "LEDGER_GOOGLE_API_CREDENTIALS is set: set LEDGER_GOOGLE_JWKS (and the rest of Google's verification) too"
                )
            }
            var base: URL?
            if let text = value("LEDGER_GOOGLE_API_URL") {
                guard let url = URL(string: text), url.scheme == "https" || url.scheme == "http", url.host != nil else {
                    throw Problem("LEDGER_GOOGLE_API_URL is not an http(s) URL")
                }
                base = url
            }
            do {
                googlePlayAPI = GooglePlayAPI(
                    try GooglePlayAPI.Configuration(serviceAccountJSON: credentials, baseURL: base))
            } catch {
                throw Problem("LEDGER_GOOGLE_API_CREDENTIALS: \(error)")
            }
        }
        // Platform certificates, the WeChat Pay public key, or both while a merchant switches.
        let certs = try file("LEDGER_WECHAT_PLATFORM_CERTS")
        let publicKey = try file("LEDGER_WECHAT_PUBLIC_KEY")
        if certs != nil || publicKey != nil {
            let first = certs != nil ? "LEDGER_WECHAT_PLATFORM_CERTS" : "LEDGER_WECHAT_PUBLIC_KEY"
            guard let keyFile = try file("LEDGER_WECHAT_APIV3_KEY_FILE"), let appid = value("LEDGER_WECHAT_APPID"),
                let mchid = value("LEDGER_WECHAT_MCHID")
            else {
                throw Problem(
                    "\(first) is set: set LEDGER_WECHAT_APIV3_KEY_FILE, LEDGER_WECHAT_APPID and LEDGER_WECHAT_MCHID too"
                )
            }
            let key = Array(
                String(decoding: keyFile, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).utf8)
            guard key.count == 32 else {
                throw Problem("LEDGER_WECHAT_APIV3_KEY_FILE must hold the 32-byte APIv3 key (its content is not shown)")
            }
            var keys: [String: _RSA.Signing.PublicKey] = [:]
            if let certs {
                let parsed: [Certificate]
                do { parsed = try AppleVerifier.Configuration.roots(fromFile: certs) } catch {
                    throw Problem("LEDGER_WECHAT_PLATFORM_CERTS is not PEM certificates")
                }
                for cert in parsed {
                    guard let k = _RSA.Signing.PublicKey(cert.publicKey) else {
                        throw Problem("a WeChat platform certificate has no RSA key")
                    }
                    keys[WeChatPayVerifier.serial(cert.serialNumber.bytes)] = k
                }
            }
            var configuration = WeChatPayVerifier.Configuration(
                platformKeys: keys, apiV3Key: key, appId: appid, merchantId: mchid)
            if let publicKey {
                guard let id = value("LEDGER_WECHAT_PUBLIC_KEY_ID"), id.hasPrefix(WeChatPayVerifier.publicKeyPrefix)
                else {
                    throw Problem(
                        "LEDGER_WECHAT_PUBLIC_KEY is set: set LEDGER_WECHAT_PUBLIC_KEY_ID to its id (PUB_KEY_ID_…) too")
                }
                do {
                    configuration.publicKeys[id] = try _RSA.Signing.PublicKey(
                        pemRepresentation: String(decoding: publicKey, as: UTF8.self))
                } catch {
                    throw Problem("LEDGER_WECHAT_PUBLIC_KEY is not a PEM RSA public key")
                }
            }
            weChatPay = WeChatPayVerifier(configuration)
        }
    }
}
