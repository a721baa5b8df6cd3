import LedgerCore

/// A fact from or about a store names its app: Apple bundleId, Google packageName or WeChat appid,
/// and for WeChat Pay the merchant (mchid). A transaction id is unique per channel and app.
/// Facts written before these fields existed read them as absent.
public protocol StoreAppFact: FactBody {
    var app: String? { get set }
    var merchant: String? { get set }
}

extension StoreAppFact {
    /// `app` and `merchant`: the conforming type's own properties (`\.app`, `\.merchant` written
    /// where the type's fields are declared). A key path through the protocol's requirement has no
    /// fixed offset, and a read sets it through the runtime, far slower.
    static func appFields(_ app: FieldPath<Self, String?>, _ merchant: FieldPath<Self, String?>) -> [FactField<Self>] {
        [
            .optionalText("app", app, "The app: Apple bundleId, Google packageName or WeChat appid."),
            .optionalText("merchant", merchant, "The WeChat Pay merchant (mchid), when the store names one."),
        ]
    }
}

/// The fields every store fact gained in the version that added the app.
let appFieldNames: Set<String> = ["app", "merchant"]
