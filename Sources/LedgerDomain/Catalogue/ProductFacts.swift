import LedgerCore

/// A store product's entitlement, as of `validFrom`: the body of ProductDefined and ProductChanged.
@PublicInit
public struct ProductDefinition: FactBody, Codable {
    public var channel: Channel
    public var storeProductId: String
    public var entitlement: Entitlement
    /// Increases with every change of this product.
    public var version: Int64
    public var validFrom: Timestamp
    public var price: Money?

    public static let fields = FieldTable(
        ProductDefinition(
            channel: .appstore, storeProductId: "", entitlement: .coins(1), version: 1, validFrom: .blank),
        [
            .channel("channel", \.channel),
            .text("storeProductId", \.storeProductId, "The store's product id (com.example.coins100)."),
            .object("entitlement", \.entitlement),
            .int("version", \.version, min: 1, "Increases with every change of this product."),
            .timestamp("validFrom", \.validFrom, "When this definition takes effect."),
            .optionalObject("price", \.price, "The list price, when known."),
        ])

    var summary: String {
        "\(channel.rawValue) \(storeProductId) v\(version) -> \(entitlement) from \(validFrom.iso8601)"
    }
}

extension FactTypes {
    public static let productDefined = FactType<ProductDefinition>(
        "ProductDefined", "Catalogue: a store product and the entitlement it gives, as of validFrom.",
        stream: "product:<channel>:<storeProductId>", key: "product:<channel>:<storeProductId>:<version>",
        wrap: Fact.productDefined, summary: \.summary)

    public static let productChanged = FactType<ProductDefinition>(
        "ProductChanged", "Catalogue: a new version of a store product's definition (same shape as ProductDefined).",
        stream: "product:<channel>:<storeProductId>", key: "product:<channel>:<storeProductId>:<version>",
        wrap: Fact.productChanged, summary: \.summary)
}
