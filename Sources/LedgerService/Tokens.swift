import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import LedgerCore

/// What an API token may do.
public enum Scope: String, Sendable, CaseIterable, Hashable {
    /// `POST /v1/events`.
    case append
    /// The log, streams, orders and users.
    case read
    /// `GET /v1/audit`.
    case audit
}

/// The service's API tokens: per calling service, with scopes, kept only as SHA-256 digests. A
/// presented token is hashed and compared with every digest in constant time; the token itself is
/// never stored, logged or echoed.
///
/// One token a line: `NAME SCOPE[,SCOPE...] sha256:HEX` (`#` starts a comment), as
/// `ledger serve token` prints it.
public struct TokenTable: Sendable {
    public struct Entry: Sendable, Hashable {
        public var name: String
        public var scopes: Set<Scope>
        public var digest: [UInt8]
    }

    public private(set) var entries: [Entry]

    public init(entries: [Entry] = []) { self.entries = entries }

    /// Parses the table; a bad line is refused with its number (and never its digest).
    public init(parsing text: String) throws {
        var entries: [Entry] = []
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line =
                raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            if parts.isEmpty { continue }
            guard parts.count == 3 else {
                throw TokenTableError(line: i + 1, message: "expected NAME SCOPES sha256:HEX")
            }
            var scopes: Set<Scope> = []
            for s in parts[1].split(separator: ",") {
                guard let scope = Scope(rawValue: String(s)) else {
                    throw TokenTableError(
                        line: i + 1,
                        message: "unknown scope \(Echo.quoted(String(s), limit: 20)); scopes: append, read, audit")
                }
                scopes.insert(scope)
            }
            guard parts[2].hasPrefix("sha256:"), let digest = Hex.bytes(String(parts[2].dropFirst(7))),
                digest.count == 32
            else {
                throw TokenTableError(line: i + 1, message: "the digest must be sha256: and 64 hex digits")
            }
            entries.append(Entry(name: parts[0], scopes: scopes, digest: digest))
        }
        self.entries = entries
    }

    /// A new random token for `name` and its table line (the token is shown once, to its owner).
    public static func issue(name: String, scopes: Set<Scope>) -> (token: String, line: String) {
        var bytes = [UInt8](repeating: 0, count: 32)
        var rng = SystemRandomNumberGenerator()
        for i in bytes.indices { bytes[i] = UInt8.random(in: .min ... .max, using: &rng) }
        let token =
            "lgr_"
            + Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        let line = "\(name) \(scopes.map(\.rawValue).sorted().joined(separator: ",")) sha256:\(digest(token).hexString)"
        return (token, line)
    }

    static func digest(_ token: String) -> [UInt8] { Array(Crypto.SHA256.hash(data: Array(token.utf8))) }

    /// The entry whose digest is the token's, compared with every entry in constant time.
    public func authenticate(_ token: String) -> Entry? {
        let presented = Self.digest(token)
        var found: Entry?
        for entry in entries {
            var difference: UInt8 = 0
            for (a, b) in zip(entry.digest, presented) { difference |= a ^ b }
            if difference == 0 && found == nil { found = entry }
        }
        return found
    }
}

public struct TokenTableError: Error, CustomStringConvertible, Sendable {
    public var line: Int
    public var message: String
    public var description: String { "API token table, line \(line): \(message)" }
}

/// Checks `Authorization: Bearer TOKEN` and the scope a route needs: 401 without a known token,
/// 403 when the token lacks the scope. Routes that need no token pass `nil`.
struct TokenMiddleware: RouterMiddleware {
    typealias Context = LedgerRequestContext
    let table: TokenTable
    let scope: Scope

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let header = request.headers[.authorization], header.count > 7, header.prefix(7).lowercased() == "bearer "
        else {
            var p = Problem(
                .unauthorized, "unauthorized", "An API token is required",
                detail: "send Authorization: Bearer <token> with a token that has the \(scope.rawValue) scope")
            p.headers[.wwwAuthenticate] = "Bearer realm=\"ledger\""
            throw p
        }
        guard let entry = table.authenticate(String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)) else {
            var p = Problem(
                .unauthorized, "unauthorized", "The API token is not known",
                detail: "the bearer token is not one of this service's tokens (it is not shown here)")
            p.headers[.wwwAuthenticate] = "Bearer realm=\"ledger\", error=\"invalid_token\""
            throw p
        }
        guard entry.scopes.contains(scope) else {
            throw Problem(
                .forbidden, "forbidden", "The API token lacks a scope",
                detail:
                    "the token of \(Echo.quoted(entry.name)) does not have the \(scope.rawValue) scope this route needs"
            )
        }
        var context = context
        context.caller = entry.name
        return try await next(request, context)
    }
}
