/// A store transaction id is unique per channel and app, not across them: Apple, Google and
/// WeChat ids are drawn from different spaces, and two apps may see the same id. The fold keys
/// each transaction by a key that tells them apart.
///
/// The first transaction seen with an id is keyed by the id itself, so a log where ids do not
/// collide folds exactly as before; another channel or app with the same id gets
/// `channel:app:id`. A fact that leaves out its app (facts written before apps were recorded,
/// client callbacks) or its channel (older grants) joins the transaction it can only mean: the one
/// whose channel and app it does not contradict, the first such one if several. The views carry
/// their channel and app, so only ids that collide need state of their own.
struct SharedTransactionIds: Sendable, Codable {
    /// By store id, the keys of the transactions after the first that use it.
    var keys: [String: [String]] = [:]
    /// The store id behind each of those keys.
    var ids: [String: String] = [:]
}

extension TransactionView {
    /// The app its key names when another transaction had its id first (a key `channel:app:id`):
    /// what tells its audit findings from the first's. Nil for the first, whose key is the id for
    /// good, so that its findings keep their keys when another app uses the id later.
    public var keyApp: String? { Projections.app(ofKey: key, id: transactionId) }

    /// Whether a fact naming channel `c` and app `a` (nil: not said) can mean this transaction.
    func admits(_ c: Channel?, _ a: String?) -> Bool {
        (channel == nil || c == nil || channel == c) && (app == nil || a == nil || app == a)
    }
}

extension Projections {
    /// The key of a transaction whose store id another transaction had first: `channel:app:id`.
    static func laterKey(_ c: Channel?, _ app: String?, _ id: String) -> String {
        "\(c?.rawValue ?? "?"):\(app ?? ""):\(id)"
    }

    /// The app a key made by ``laterKey(_:_:_:)`` names (nil for a key that is the id itself, or
    /// that names no app).
    static func app(ofKey key: String, id: String) -> String? {
        guard key != id, key.hasSuffix(":" + id) else { return nil }
        let head = key.dropLast(id.count + 1)
        guard let colon = head.firstIndex(of: ":") else { return nil }
        let app = head[head.index(after: colon)...]
        return app.isEmpty ? nil : String(app)
    }

    /// The key of the transaction a fact names, new if no transaction with that id admits it (its
    /// view is made here; the fact's update follows). A fact that names a channel or app the
    /// transaction did not know yet tells it.
    mutating func txKey(_ c: Channel?, _ app: String?, _ id: String) -> String {
        guard let key = existingKey(c, app, id) else {
            // A new transaction, known by its channel and app from its first fact on.
            let key = !transactions.contains(id) ? id : Self.laterKey(c, app, id)
            if key != id {
                shared.keys[id, default: []].append(key)
                shared.ids[key] = id
            }
            var t = TransactionView(transactionId: id, key: key)
            t.channel = c
            t.app = app
            _ = transactions.add(key, t)
            return key
        }
        var changed = false
        transactions.update(key) { t in
            if let app, t.app == nil {
                t.app = app
                changed = true
            }
            if let c, t.channel == nil {
                t.channel = c
                changed = true
            }
        }
        if changed, tracksChanges { changes.transactions.insert(key) }
        return key
    }

    /// The key of the transaction with store id `id` that a fact naming `c` and `app` means, if any.
    func existingKey(_ c: Channel?, _ app: String?, _ id: String) -> String? {
        if transactions.with(id, { $0.admits(c, app) }) == true { return id }
        return shared.keys[id]?.first { transactions.with($0, { $0.admits(c, app) }) ?? false }
    }

    /// `body` applied to the transaction with store id `id` that a fact naming `c` and `app` means,
    /// if there is one: ``existingKey(_:_:_:)`` and the read together, one lookup of the id (a
    /// spilled view read back once, not twice).
    func withTransaction<T>(_ c: Channel?, _ app: String?, _ id: String, _ body: (TransactionView) -> T) -> T? {
        if case .some(.some(let result)) = transactions.with(id, { $0.admits(c, app) ? Optional(body($0)) : nil }) {
            return result
        }
        guard let key = shared.keys[id]?.first(where: { transactions.with($0, { $0.admits(c, app) }) ?? false }) else {
            return nil
        }
        return transactions.with(key, body)
    }

    /// The store's id of the transaction under `key` (a key is the id itself unless another channel
    /// or app used the id first): what its view's ``TransactionView/transactionId`` holds, without
    /// reading the view (which may be spilled).
    public func storeTransactionId(key: String) -> String { shared.ids.isEmpty ? key : shared.ids[key] ?? key }

    /// The transaction a fact names, if the log has it.
    public func transaction(_ c: Channel?, app: String? = nil, _ id: String) -> TransactionView? {
        existingKey(c, app, id).flatMap { transactions[$0] }
    }
}
