import LedgerCore

/// The catalogue: product definitions by channel and store product id, each valid from its date.
extension Projections {
    mutating func apply(_ d: ProductDefinition, _ ctx: FactContext) {
        let key = Self.productKey(d.channel, d.storeProductId)
        var defs = products[key] ?? []
        defs.append(d)
        defs.sort { ($0.validFrom, $0.version) < ($1.validFrom, $1.version) }
        products[key] = defs
        // What the transactions of this product owe may change (a rare fact: a scan is fine).
        if tracksChanges {
            for (id, t) in transactions where t.productId == d.storeProductId { changes.transactions.insert(id) }
        }
    }

    static func productKey(_ c: Channel?, _ id: String) -> String { "\(c?.rawValue ?? "?"):\(id)" }

    /// The product definition in force at `time`: the latest whose validFrom is not after it
    /// (the earliest one when the catalogue starts later).
    public func product(_ channel: Channel?, _ id: String, at time: Timestamp?) -> ProductDefinition? {
        guard let defs = products[Self.productKey(channel, id)], !defs.isEmpty else { return nil }
        guard let time else { return defs.last }
        return defs.last(where: { $0.validFrom <= time }) ?? defs.first
    }
}
