import LedgerCore

/// A purchase made in the store's sandbox (Sandbox, Xcode, local testing): recorded and shown,
/// but no revenue, no money at risk and judged by no rule.
public struct SandboxPurchase: Hashable, Sendable {
    public var transactionId: String
    public var channel: Channel?
    public var environment: String
    public var productId: String?
    public var userId: String?
    public var price: Money?
    public var position: Int64?
}

extension Audit {
    /// The sandbox purchases of the replayed log, by transaction id.
    public static func sandboxPurchases(_ p: Projections) -> [SandboxPurchase] { verifiedPurchases(p).sandbox }

    /// The verified purchases, from one pass over the transactions: how many were made in
    /// production, by channel (an audit's denominator), and the sandbox ones, by transaction id.
    public static func verifiedPurchases(_ p: Projections) -> (byChannel: [Channel: Int64], sandbox: [SandboxPurchase])
    {
        var byChannel: [Channel: Int64] = [:], sandbox: [SandboxPurchase] = []
        p.transactions.forEachInPlace(readAhead: Audit.readAhead) { _, t in
            guard t.verified else { return }
            if t.isSandbox {
                sandbox.append(
                    SandboxPurchase(
                        transactionId: t.transactionId, channel: t.channel, environment: t.environment.raw,
                        productId: t.productId,
                        userId: t.userId, price: t.price, position: t.verifiedPosition))
            } else if let c = t.channel {
                byChannel[c, default: 0] += 1
            }
        }
        return (byChannel, sandbox.sorted { $0.transactionId < $1.transactionId })
    }

    /// The grants by policy (goodwill, compensation, promotion, migration) still standing or not, in log order.
    public static func policyGrants(_ p: Projections) -> [PolicyGrant] {
        p.policyGrants.values.sorted { $0.grant.position < $1.grant.position }
    }
}
