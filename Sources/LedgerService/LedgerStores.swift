import LedgerLog
import LedgerProjection
import Logging
import ServiceLifecycle

/// The service's connections to the ledger, each as its least-privileged role: the writer appends,
/// the reader serves the log and the read models, the auditor runs audits.
public final class LedgerStores: Sendable {
    public let writer: EventStore
    public let reader: EventStore
    public let auditor: EventStore

    public init(writer: EventStore, reader: EventStore, auditor: EventStore) {
        self.writer = writer
        self.reader = reader
        self.auditor = auditor
    }

    /// Opens the three stores from the owner's configuration (each role as `connecting(as:)` or its
    /// own `LEDGER_<ROLE>_DATABASE_URL`, as `roleConfiguration` resolves it).
    public static func open(
        _ roleConfiguration: (LedgerRole) -> LedgerConfiguration, logger: Logger
    ) async throws -> LedgerStores {
        let writer = try await EventStore.open(roleConfiguration(.writer), logger: logger)
        do {
            let reader = try await EventStore.open(roleConfiguration(.reader), logger: logger)
            do {
                let auditor = try await EventStore.open(roleConfiguration(.auditor), logger: logger)
                return LedgerStores(writer: writer, reader: reader, auditor: auditor)
            } catch {
                await reader.close()
                throw error
            }
        } catch {
            await writer.close()
            throw error
        }
    }

    public func close() async {
        await writer.close()
        await reader.close()
        await auditor.close()
    }
}

/// Keeps the read models current inside the service (`ledger serve --project`), as
/// `ledger project --follow` does: survives database restarts, stops at shutdown. A failure (another
/// projector holds the read models, say) is logged and leaves the HTTP service running; `/readyz`
/// shows the lag that follows.
struct ProjectorService: Service {
    let store: EventStore
    let memory: FoldMemory
    let logger: Logger

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                try await Projector.followSurvivingRestarts(
                    store, logger: logger, memory: memory,
                    onRestart: { [logger] error, wait in
                        logger.warning("projector: database unavailable; restarting", metadata: ["wait": "\(wait)"])
                    })
            }
        } catch is CancellationError {
        } catch {
            let code = (error as? any LedgerCodedError)?.code.name ?? "\(type(of: error))"
            logger.error("projector stopped; the read models stay where they are", metadata: ["code": "\(code)"])
            try? await gracefulShutdown()
        }
        await store.close()
    }
}

/// Seals, every `interval`, the events a writer committed as pending and left unsealed (it stopped
/// between its commit and its `seal_events`), so that they reach the log and its readers even when
/// no append follows. A failure is logged and the next round tries again.
struct SealerService: Service {
    let store: EventStore
    let interval: Duration
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let sealed = try await store.sealPending()
                    if sealed > 0 {
                        logger.notice("sealed events a writer left pending", metadata: ["events": "\(sealed)"])
                    }
                } catch  where !Task.isCancelled {
                    logger.warning("sealing pending events failed; trying again", metadata: ["error": "\(error)"])
                } catch {}
                try? await Task.sleep(for: interval)
            }
        }
    }
}

/// Closes the stores when the service group shuts down, after the HTTP server (listed before it,
/// so shut down after it): in-flight appends have finished by then.
struct StoresService: Service {
    let stores: LedgerStores
    let gate: AppendGate
    func run() async throws {
        try? await gracefulShutdown()
        await gate.drain()
        await stores.close()
    }
}
