/// A store transaction id is unique per channel and app, not across them: Apple, Google and
/// WeChat ids are drawn from different spaces, and two apps may see the same id. The fold keys
/// each transaction by a key that tells them apart.
///
/// The first transaction seen with an id is keyed by the id itself, so a log where ids do not
/// collide folds exactly as before; another channel or app with the same id gets
/// `channel:app:id`. A fact that leaves out its app (facts written before apps were recorded,
/// client callbacks) or its channel (older grants) joins the transaction it can only mean: the one
/// whose channel and app it does not contradict, the first such one if several.
struct TransactionKeys: Sendable {
    struct Entry: Sendable {
        var channel: Channel?
        var app: String?
        var key: String

        func admits(_ c: Channel?, _ a: String?) -> Bool {
            (channel == nil || c == nil || channel == c) && (app == nil || a == nil || app == a)
        }
    }

    private var byId: [String: [Entry]] = [:]
    /// The store id of each key that is not the id itself.
    private var ids: [String: String] = [:]

    /// The key of transaction `id` in channel `c` of app `app`, registered if new. `learned` is
    /// set when this fact told an existing transaction its channel or app.
    mutating func key(_ c: Channel?, _ app: String?, _ id: String) -> (key: String, learned: Entry?) {
        var entries = byId[id, default: []]
        if let i = entries.firstIndex(where: { $0.admits(c, app) }) {
            let before = entries[i]
            if entries[i].channel == nil { entries[i].channel = c }
            if entries[i].app == nil { entries[i].app = app }
            let learned = entries[i].channel != before.channel || entries[i].app != before.app
            if learned { byId[id] = entries }
            return (entries[i].key, learned ? entries[i] : nil)
        }
        let key = entries.isEmpty ? id : "\(c?.rawValue ?? "?"):\(app ?? ""):\(id)"
        if key != id { ids[key] = id }
        entries.append(Entry(channel: c, app: app, key: key))
        byId[id] = entries
        return (key, nil)
    }

    /// The key `id` would join, without registering anything.
    func existing(_ c: Channel?, _ app: String?, _ id: String) -> String? {
        byId[id]?.first(where: { $0.admits(c, app) })?.key
    }

    /// The store's transaction id behind a key.
    func id(of key: String) -> String { ids[key] ?? key }

    /// The app of the transaction behind a key, once a fact has named it.
    func app(of key: String) -> String? { byId[id(of: key)]?.first(where: { $0.key == key })?.app }
}
