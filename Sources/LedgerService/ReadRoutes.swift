import Foundation
import Hummingbird
import LedgerCore
import LedgerDomain
import LedgerLog
import LedgerProjection
import LedgerReport

/// `GET /v1/orders/{id}`, `GET /v1/users/{id}`, `GET /v1/audit`: the read models and the audit
/// report, as `ledger show` and `ledger audit` produce them.
struct ReadRoutes {
    let stores: LedgerStores
    let metrics: ServiceMetrics
    let foldMemory: FoldMemory

    func entity(_ kind: EntityView.Kind) -> @Sendable (Request, LedgerRequestContext) async throws -> Response {
        { [stores] _, context in
            let id = try context.pathParameter("id")
            guard let view = try await EntityView.json(stores.reader, kind: kind, id: id) else {
                let checkpoints = try await LogReplay(stores.reader).checkpoints().map {
                    "\($0.key.rawValue)=\($0.value)"
                }.sorted().joined(separator: ", ")
                throw Problem.notFound(
                    "no \(kind.rawValue) \(Echo.quoted(id)) in the read models (checkpoints: \(checkpoints))")
            }
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: view.compactText + "\n")))
        }
    }

    /// The audit report as of a time (`as_of`, RFC 3339, by the database clock) or of the head.
    func audit(_ request: Request, context: LedgerRequestContext) async throws -> Response {
        let store = LogReplay(stores.auditor)
        var through: Int64?
        let asOf = request.uri.queryParameters["as_of"].map(String.init)
        if let asOf {
            guard let t = Timestamp(asOf) else {
                throw Problem.badParameter(
                    "as_of",
                    "as_of \(Echo.quoted(asOf, limit: 60)) is not an RFC 3339 time such as 2026-03-31T08:15:00Z")
            }
            let now = Timestamp(microsecondsSince1970: Int64(Date().timeIntervalSince1970 * 1_000_000))
            if t > now {
                throw Problem.badParameter(
                    "as_of", "as_of is in the future: the log can only be replayed as of a moment that has passed")
            }
            through = try await store.position(asOf: t)
        }
        let format = request.uri.queryParameters["format"].map(String.init) ?? "json"
        let types = ["json": "application/json", "csv": "text/csv; charset=utf-8", "html": "text/html; charset=utf-8"]
        guard let contentType = types[format] else {
            throw Problem.badParameter("format", "format must be json, csv or html")
        }
        let options = AuditOptions()
        let run = try await store.audit(through: through, options: options, memory: foldMemory)
        let scope = AuditReport.Scope(
            position: run.position, headHash: run.headHash.hexString, logTime: run.logTime, events: run.events,
            asOf: asOf, from: nil, user: nil, kinds: [], options: options)
        var report = AuditReport(
            scope: scope, findings: run.findings,
            daily: run.daily.map {
                .init(
                    day: $0.day, payments: $0.payments, grants: $0.grants, refunds: $0.refunds,
                    revocations: $0.revocations)
            },
            verifiedByChannel: run.verifiedByChannel, sandbox: run.sandbox, policyGrants: run.policyGrants)
        report.statements = run.statements
        report.revenue = run.revenue
        report.subscriptionStates = run.subscriptionStates
        if through == nil {
            metrics.findings(Dictionary(report.byKind.map { ($0.kind.rawValue, $0.count) }, uniquingKeysWith: +))
        }
        // `bom=1` with CSV: a UTF-8 byte order mark first, for spreadsheets.
        let bom = format == "csv" && request.uri.queryParameters["bom"] == "1" ? "\u{FEFF}" : ""
        let text = format == "csv" ? bom + report.csv : format == "html" ? report.html : report.json
        return Response(
            status: .ok, headers: [.contentType: contentType], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
