import _CryptoExtras
import ArgumentParser
import Crypto
import Foundation
import LedgerCore
import LedgerDomain
import LedgerLog
import LedgerNotifications
import LedgerService
import Logging
import X509

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the ledger over HTTP: append, read, audit, store notifications, health and metrics.",
        discussion: """
            Appends go through the same validation and the same append path as `ledger append`. Every /v1 route but
            the notification endpoints needs an API token (Authorization: Bearer) with its scope: create one with
            `ledger serve token --name NAME --scopes append,read` and put the printed line into the file given by
            --tokens-file (or LEDGER_API_TOKENS_FILE). Store notification endpoints answer only for the stores
            configured (see the README). SIGTERM or SIGINT: stop accepting, finish the requests in flight, close.
            """,
        subcommands: [Run.self, Token.self], defaultSubcommand: Run.self)

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "run", abstract: "Run the service (the default).")

        @OptionGroup var connection: ConnectionOptions

        @Option(help: "Address to listen on (default: $LEDGER_HTTP_HOST or 127.0.0.1).")
        var host: String?

        @Option(help: "Port (default: $LEDGER_HTTP_PORT or 8080; 0 picks a free one, printed on standard error).")
        var port: Int?

        @Option(name: .customLong("tokens-file"), help: "API token table (default: $LEDGER_API_TOKENS_FILE).")
        var tokensFile: String?

        @Option(name: .customLong("max-body-bytes"), help: "Largest request body accepted (413 over it).")
        var maxBodyBytes: Int = ServiceLimits.defaultMaximumBodyBytes

        @Option(name: .customLong("max-batch-events"), help: "Most facts in one POST /v1/events (413 over it).")
        var maxBatchEvents: Int = 10_000

        @Flag(help: "Also run the projector (as `ledger project --follow` does), so /v1/orders and /v1/users stay current.")
        var project = false

        func run() async throws {
            try await runReportingErrors {
                let env = ProcessInfo.processInfo.environment
                var config = LedgerService.Configuration()
                config.host = host ?? env["LEDGER_HTTP_HOST"].flatMap { $0.isEmpty ? nil : $0 } ?? "127.0.0.1"
                config.port = try port ?? env["LEDGER_HTTP_PORT"].flatMap { $0.isEmpty ? nil : $0 }.map {
                    guard let p = Int($0), (0...65535).contains(p) else { throw ConfigurationProblem("LEDGER_HTTP_PORT must be a port number") }
                    return p
                } ?? 8080
                config.limits.maximumBodyBytes = maxBodyBytes
                config.limits.maximumBatchEvents = maxBatchEvents
                config.tokens = try Self.tokens(tokensFile ?? env["LEDGER_API_TOKENS_FILE"], inline: env["LEDGER_API_TOKENS"])
                config.notifications = try ServeNotifications.configuration(env)
                var roles: [LedgerRole: LedgerConfiguration] = [:]
                for role in [LedgerRole.writer, .reader, .auditor] { roles[role] = try await connection.configuration(as: role) }
                var logger = Logger(label: "ledger-serve")
                logger.logLevel = env["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
                let stores = try await LedgerStores.open({ roles[$0]! }, logger: logger)
                if project {
                    do {
                        config.projector = try await EventStore.open(try await connection.configuration(as: .projector), logger: logger)
                    } catch {
                        await stores.close()
                        throw error
                    }
                }
                let service = LedgerService(configuration: config, stores: stores, logger: logger)
                let host = config.host
                try await service.run(onListening: { port in Diagnostics.say("ledger: serving on http://\(host):\(port)") })
                Diagnostics.say("ledger: stopped")
            }
        }

        /// The token table from a file, or from LEDGER_API_TOKENS (its lines; digests only, no secret).
        static func tokens(_ path: String?, inline: String?) throws -> TokenTable {
            if (path ?? "").isEmpty, let inline, !inline.isEmpty {
                do {
                    return try TokenTable(parsing: inline.replacingOccurrences(of: ";", with: "\n"))
                } catch {
                    throw ConfigurationProblem("LEDGER_API_TOKENS: \(error)")
                }
            }
            guard let path, !path.isEmpty else {
                Diagnostics.say("ledger: warning: no API tokens configured (--tokens-file, LEDGER_API_TOKENS_FILE or LEDGER_API_TOKENS): every /v1 route but the store notifications answers 401")
                return TokenTable()
            }
            let data = try readInputFile(path)
            do {
                return try TokenTable(parsing: String(decoding: data, as: UTF8.self))
            } catch {
                throw ConfigurationProblem("--tokens-file: \(error)")
            }
        }
    }

    struct Token: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an API token: prints the token (once; give it to the calling service) and the line for the token file.")

        @Option(help: "The calling service's name (letters, digits, - _ .).")
        var name: String

        @Option(help: "Comma-separated scopes: append, read, audit.")
        var scopes: String

        func validate() throws {
            guard !name.isEmpty, name.unicodeScalars.allSatisfy({ CharacterSet.alphanumerics.contains($0) || "-_.".unicodeScalars.contains($0) }) else {
                throw ValidationError("--name must be letters, digits, - _ or .")
            }
            for s in scopes.split(separator: ",") where Scope(rawValue: String(s)) == nil {
                throw ValidationError("--scopes: unknown scope '\(s)'; scopes: append, read, audit")
            }
        }

        func run() throws {
            let (token, line) = TokenTable.issue(name: name, scopes: Set(scopes.split(separator: ",").compactMap { Scope(rawValue: String($0)) }))
            print("token: \(token)")
            print("line:  \(line)")
        }
    }
}

/// The store notification endpoints' configuration, from the environment (see the README).
enum ServeNotifications {
    static func configuration(_ env: [String: String]) throws -> NotificationConfiguration {
        func value(_ name: String) -> String? { env[name].flatMap { $0.isEmpty ? nil : $0 } }
        func file(_ name: String) throws -> [UInt8]? {
            guard let path = value(name) else { return nil }
            return Array(try readInputFile(path))
        }
        var out = NotificationConfiguration()
        if let root = try file("LEDGER_APPSTORE_ROOT_CERT") {
            guard let bundle = value("LEDGER_APPSTORE_BUNDLE_ID") else { throw ConfigurationProblem("LEDGER_APPSTORE_ROOT_CERT is set: set LEDGER_APPSTORE_BUNDLE_ID too") }
            let roots: [Certificate]
            do { roots = try AppleVerifier.Configuration.roots(fromFile: root) } catch {
                throw ConfigurationProblem("LEDGER_APPSTORE_ROOT_CERT is not a PEM or DER certificate")
            }
            out.appStore = AppleVerifier(.init(roots: roots, bundleId: bundle, environment: value("LEDGER_APPSTORE_ENVIRONMENT") ?? "Production"))
        }
        if let jwks = try file("LEDGER_GOOGLE_JWKS") {
            guard let audience = value("LEDGER_GOOGLE_AUDIENCE"), let package = value("LEDGER_GOOGLE_PACKAGE_NAME") else {
                throw ConfigurationProblem("LEDGER_GOOGLE_JWKS is set: set LEDGER_GOOGLE_AUDIENCE and LEDGER_GOOGLE_PACKAGE_NAME too")
            }
            out.googlePlay = GooglePlayVerifier(.init(keys: try JWKS.rsaKeys(jwks), audience: audience,
                                                      serviceAccount: value("LEDGER_GOOGLE_SERVICE_ACCOUNT"), packageName: package))
        }
        if let certs = try file("LEDGER_WECHAT_PLATFORM_CERTS") {
            guard let keyFile = try file("LEDGER_WECHAT_APIV3_KEY_FILE"), let appid = value("LEDGER_WECHAT_APPID"), let mchid = value("LEDGER_WECHAT_MCHID") else {
                throw ConfigurationProblem("LEDGER_WECHAT_PLATFORM_CERTS is set: set LEDGER_WECHAT_APIV3_KEY_FILE, LEDGER_WECHAT_APPID and LEDGER_WECHAT_MCHID too")
            }
            let key = Array(String(decoding: keyFile, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).utf8)
            guard key.count == 32 else { throw ConfigurationProblem("LEDGER_WECHAT_APIV3_KEY_FILE must hold the 32-byte APIv3 key (its length is not shown)") }
            var keys: [String: _RSA.Signing.PublicKey] = [:]
            do {
                for cert in try AppleVerifier.Configuration.roots(fromFile: certs) {
                    guard let k = _RSA.Signing.PublicKey(cert.publicKey) else { throw ConfigurationProblem("a WeChat platform certificate has no RSA key") }
                    keys[cert.serialNumber.bytes.hexString.uppercased()] = k
                }
            } catch let e as ConfigurationProblem { throw e } catch {
                throw ConfigurationProblem("LEDGER_WECHAT_PLATFORM_CERTS is not PEM certificates")
            }
            out.weChatPay = WeChatPayVerifier(.init(platformKeys: keys, apiV3Key: key, appId: appid, merchantId: mchid))
        }
        return out
    }
}
