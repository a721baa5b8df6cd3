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
    public static func sandboxPurchases(_ p: Projections) -> [SandboxPurchase] {
        p.transactions.values.filter { $0.isSandbox && $0.verified }.map {
            SandboxPurchase(transactionId: $0.transactionId, channel: $0.channel, environment: $0.environment.raw, productId: $0.productId,
                            userId: $0.userId, price: $0.price, position: $0.verifiedPosition)
        }.sorted { $0.transactionId < $1.transactionId }
    }

    /// The grants by policy (goodwill, compensation, promotion, migration) still standing or not, in log order.
    public static func policyGrants(_ p: Projections) -> [PolicyGrant] {
        p.policyGrants.values.sorted { $0.grant.position < $1.grant.position }
    }
}
