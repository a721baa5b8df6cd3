import Foundation
import HTTPTypes
import Hummingbird
import LedgerCore
import LedgerLog
import LedgerProjection

/// `/healthz` (the process answers), `/readyz` (can append: the database answers and the schema's
/// migrations are this build's; with `?reads=fresh`, also the read models are not too far behind),
/// `/metrics` (Prometheus text).
struct HealthRoutes {
    let stores: LedgerStores
    let metrics: ServiceMetrics
    let maximumProjectorLag: Int64
    /// This build's migrations, read from its resources once (not on every probe).
    static let shippedMigrations = Result { try Migration.eventLogAndReadModels() }

    func healthz(_ request: Request, context: LedgerRequestContext) async throws -> Response {
        json(.ok, "{\"status\":\"ok\"}\n")
    }

    func readyz(_ request: Request, context: LedgerRequestContext) async throws -> Response {
        var checks: [(String, JSONValue)] = []
        var ready = true
        let head: Int64
        do {
            head = try await stores.reader.headPosition()
            checks.append(("database", .makeObject([("ok", .bool(true)), ("head", .int(head))])))
        } catch {
            checks.append(
                (
                    "database",
                    .makeObject([("ok", .bool(false)), ("problem", .string(Problem.unavailable(error).title))])
                ))
            return json(
                .serviceUnavailable,
                JSONValue.makeObject([("status", .string("not-ready")), ("checks", .makeObject(checks))]).compactText
                    + "\n")
        }
        do {
            let applied = try await LogReplay(stores.reader).queryReadModels(
                "SELECT version, checksum FROM $schema.schema_migrations ORDER BY version")
            let shipped = try Self.shippedMigrations.get()
            let appliedPairs = (0..<applied.count).map {
                "\(applied.string($0, 0) ?? "")/\(applied.string($0, 1) ?? "")"
            }
            let shippedPairs = shipped.map { "\($0.version)/\($0.checksum)" }
            let current = appliedPairs == shippedPairs
            if !current { ready = false }
            checks.append(
                (
                    "migrations",
                    .makeObject([
                        ("ok", .bool(current)), ("applied", .int(Int64(applied.count))),
                        ("shipped", .int(Int64(shipped.count))),
                    ])
                ))
        } catch {
            ready = false
            checks.append(
                (
                    "migrations",
                    .makeObject([("ok", .bool(false)), ("problem", .string(Problem.unavailable(error).title))])
                ))
        }
        // The read models' lag is always reported; it decides readiness only when asked
        // (`?reads=fresh`): a lagging projector must not take appends out of rotation.
        let readsMatter = request.uri.queryParameters["reads"].map(String.init) == "fresh"
        do {
            let lag = try await recordLag(head: head)
            let ok = lag <= maximumProjectorLag
            if !ok && readsMatter { ready = false }
            checks.append(
                (
                    "projector",
                    .makeObject([
                        ("ok", .bool(ok)), ("lag", .int(lag)), ("maximumLag", .int(maximumProjectorLag)),
                        ("decides", .bool(readsMatter)),
                    ])
                ))
        } catch {
            if readsMatter { ready = false }
            checks.append(
                (
                    "projector",
                    .makeObject([
                        ("ok", .bool(false)), ("problem", .string(Problem.unavailable(error).title)),
                        ("decides", .bool(readsMatter)),
                    ])
                ))
        }
        let body = JSONValue.makeObject([
            ("status", .string(ready ? "ready" : "not-ready")), ("checks", .makeObject(checks)),
        ])
        return json(ready ? .ok : .serviceUnavailable, body.compactText + "\n")
    }

    func metricsText(_ request: Request, context: LedgerRequestContext) async throws -> Response {
        if let head = try? await stores.reader.headPosition() {
            metrics.databaseUp.record(1)
            _ = try? await recordLag(head: head)
        } else {
            metrics.databaseUp.record(0)
        }
        if let pending = try? await stores.reader.pendingCount() { metrics.pendingEvents.record(pending) }
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
            body: .init(
                byteBuffer: ByteBuffer(
                    string: metrics.text() + (ProcessMetrics.sample().map(ProcessMetrics.text) ?? ""))))
    }

    /// Records the head and how far the slowest read model is behind it; returns that lag.
    private func recordLag(head: Int64) async throws -> Int64 {
        metrics.logHead.record(head)
        let lag = head - (try await LogReplay(stores.reader).checkpoints().values.min() ?? 0)
        metrics.projectorLag.record(lag)
        return lag
    }

    private func json(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
