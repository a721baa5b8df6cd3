import LedgerCore

extension FindingKind {
    /// The findings that compare the log with the stores' statements.
    public var isReconciliation: Bool {
        switch self {
        case .unrecordedSale, .unrecordedRefund, .unconfirmedPayment, .amountMismatch: return true
        default: return false
        }
    }
}

extension Audit {
    /// The log checked against the stores' imported statements (nothing when none was imported).
    ///
    /// A statement line and a log transaction match on channel, app and transaction id. Sandbox lines
    /// and sandbox transactions are judged by no rule; lines of aggregated reports (no transaction
    /// id) are judged by none either, and feed no revenue figure. The window `w` is ``AuditOptions/statementWindow``, in log time.
    /// - **unrecorded-sale**: a sale line whose transaction the log never verified, `w` after the
    ///   line's time. Order: the line's (WeChat out_trade_no; an Apple appAccountToken names the
    ///   order minted with it), so the order can be found. At risk: the line's amount.
    /// - **unrecorded-refund**: a refund line the log has no refund (nor store revocation) for, `w`
    ///   after the line's time. A line naming a refund id matches the log's refund of that id, else
    ///   any refund of the transaction. At risk: the line's amount (else the price).
    /// - **unconfirmed-payment**: a verified payment with revenue (production, not family-shared)
    ///   that no sale line lists, although a statement listing every sale of its channel and app covers its
    ///   purchase time, with ``AuditOptions/statementClockSlack`` either side (its period is read
    ///   in the statement's own time zone: a WeChat bill's Beijing day). It does not wait for the
    ///   neighbouring days' statements. At risk: the price.
    /// Every finding names the order: the log's (the transaction's binding), else the line's.
    /// - **amount-mismatch**: a matched sale (or refund by id) whose amount or currency differs. One
    ///   finding per transaction; at risk: the difference (the line's amount across currencies).
    /// Only the reconciliation findings (``run(_:options:)`` includes them): what the benchmark times apart.
    public static func reconciliation(_ p: Projections, options: AuditOptions = AuditOptions()) -> [Finding] {
        var c = Context(p: p, options: options)
        reconcile(&c)
        c.findings.sort()
        return c.findings
    }

    static func reconcile(_ c: inout Context) {
        let book = c.p.statements
        guard !book.isEmpty else { return }
        var listed: Set<String> = []
        var mismatches: [String: [(line: StatementLineRecord, log: Money, position: Int64?)]] = [:]
        var unrecordedRefunds: [String: [StatementLineRecord]] = [:]
        var refundLines: [String: [StatementLineRecord]] = [:]
        for record in book.lines.values {
            let l = record.line
            guard let tx = l.transactionId, l.isRevenue else { continue }
            // The fold's transaction for the line's channel and app (an id is unique per channel and app).
            let t = c.p.transaction(l.channel, app: l.app, tx)
            let key = t?.key ?? "\(l.channel.rawValue)|\(l.app ?? "")|\(tx)"
            if let t, t.isSandbox { continue }
            switch l.kind {
            case .sale:
                listed.insert(key)
                guard let t, t.verified else {
                    if c.passed(l.at, c.options.statementWindow) {
                        c.add(
                            .unrecordedSale, l.channel, user: nil, order: c.order(named: l.orderId), tx: tx,
                            [record.position], l.amount,
                            "\(where_(record)) lists a sale of \(l.amount.map(\.description) ?? "an unstated amount") at \(l.at.iso8601) the log never verified"
                        )
                    }
                    continue
                }
                if let price = t.price, let amount = l.amount, price != amount {
                    mismatches[key, default: []].append((record, price, t.verifiedPosition))
                }
            case .refund:
                refundLines[key, default: []].append(record)
            case .fee, .feeRefund, .other:
                continue
            }
        }
        for (key, records) in refundLines {
            Self.refundLines(records, c.p.transactions[key], key, &mismatches, &unrecordedRefunds, &c)
        }
        for (key, items) in mismatches { amountMismatch(key, items, &c) }
        for (key, records) in unrecordedRefunds { unrecordedRefund(key, records, &c) }
        unconfirmedPayments(book, listed, &c)
    }

    static func where_(_ r: StatementLineRecord) -> String {
        "\(r.line.source.rawValue) \(r.line.digest.prefix(19)) line \(r.line.line)"
    }

    /// A transaction's refund lines, in the order they were logged. A line naming a refund id
    /// needs the log's refund of that id (its amount compared). Any other line with an amount needs
    /// one of the log's refunds that no line names by id (the log may have written the id otherwise,
    /// and Google's earnings report names none): one of the same amount first, else the next in
    /// order, whose amount differs (amount-mismatch); each of the log's refunds answers one line, so
    /// a second partial refund the log lacks is unrecorded, unless the lines left and the log's
    /// refunds left have the same sum (partial refunds recorded as one), or the line's period was
    /// re-issued (it may list a refund as first written and as corrected). A line without an amount
    /// (Google's voided purchases list) needs any refund, revocation or void of the transaction; a
    /// transaction the store revoked or voided without a refund answers any line. A refund later
    /// reversed counts: the log did record it.
    static func refundLines(
        _ records: [StatementLineRecord], _ t: TransactionView?, _ key: String,
        _ mismatches: inout [String: [(line: StatementLineRecord, log: Money, position: Int64?)]],
        _ unrecorded: inout [String: [StatementLineRecord]], _ c: inout Context
    ) {
        let sorted = records.sorted { $0.position < $1.position }
        let named = Set(sorted.compactMap(\.line.refundId))
        var spare = t.map { t in t.refunds.filter { !named.contains($0.refundId) } } ?? []
        let revoked = t.map { $0.storeRevokedPosition != nil || $0.voidedPosition != nil } ?? false
        var unpaired: [StatementLineRecord] = []
        for record in sorted {
            let l = record.line
            if let t {
                if let id = l.refundId, let r = t.refunds.first(where: { $0.refundId == id }) {
                    if let amount = l.amount, amount != r.amount {
                        mismatches[key, default: []].append((record, r.amount, r.position))
                    }
                    continue
                }
                if l.amount == nil, !t.refunds.isEmpty || revoked { continue }
                if let i = spare.firstIndex(where: { $0.amount == l.amount }) {
                    spare.remove(at: i)
                    continue
                }
                if t.refunds.isEmpty && revoked { continue }
            }
            unpaired.append(record)
        }
        // Partial refunds the log recorded together, as one refund of their sum (or the other way
        // round): the same money either way.
        if !unpaired.isEmpty, !spare.isEmpty, let lines = total(unpaired.map(\.line.amount)),
            lines == total(spare.map(\.amount))
        {
            return
        }
        for record in unpaired {
            if !spare.isEmpty {
                let r = spare.removeFirst()
                if let amount = record.line.amount, amount != r.amount {
                    mismatches[key, default: []].append((record, r.amount, r.position))
                }
                continue
            }
            // A re-issued period may list a refund twice, as first written and as corrected: with
            // refunds in the log, a line of it that none answers (no id, a corrected amount) is
            // answered as before the re-issue, by any refund.
            if let t, !t.refunds.isEmpty, record.line.refundId == nil,
                c.p.statements.isOfReissuedFamily(record.line.digest)
            {
                continue
            }
            guard c.passed(record.line.at, c.options.statementWindow) else { continue }
            unrecorded[key, default: []].append(record)
        }
    }

    /// The sum of amounts all given and of one currency; nil otherwise.
    static func total(_ amounts: [Money?]) -> Money? {
        guard var sum = amounts.first ?? nil else { return nil }
        for amount in amounts.dropFirst() {
            guard let amount, let next = sum.adding(amount) else { return nil }
            sum = next
        }
        return sum
    }

    /// One unrecorded-refund per transaction, however many statements (an earnings report and a
    /// voided purchases list) list its refund: the first line with an amount speaks for them.
    static func unrecordedRefund(_ key: String, _ records: [StatementLineRecord], _ c: inout Context) {
        let sorted = records.sorted { $0.position < $1.position }
        guard let first = sorted.first(where: { $0.line.amount != nil }) ?? sorted.first else { return }
        let l = first.line, t = c.p.transactions[key]
        c.add(
            .unrecordedRefund, l.channel, user: nil, order: t?.orderId ?? c.order(named: l.orderId),
            tx: l.transactionId, app: t?.keyApp, sorted.map(\.position) + [t?.verifiedPosition],
            l.amount ?? t?.price,
            "\(where_(first)) lists a \(l.isChargeback ? "chargeback" : "refund")" + (l.refundId.map { " \($0)" } ?? "")
                + (l.amount.map { " of \($0)" } ?? "")
                + " at \(l.at.iso8601) the log never recorded"
                + (sorted.count > 1 ? " (\(sorted.count) statement lines)" : ""))
    }

    static func amountMismatch(
        _ key: String, _ items: [(line: StatementLineRecord, log: Money, position: Int64?)], _ c: inout Context
    ) {
        let sorted = items.sorted { $0.line.position < $1.line.position }
        guard let first = sorted.first, let stated = first.line.line.amount else { return }
        let log = first.log
        // The difference exactly, below a minor unit too (a store's 1.995 against 1.99); held at
        // the bound when it overflows.
        let risk: Money
        if stated.currency == log.currency {
            let difference = stated.adding(log.negated)
            risk =
                difference.map { $0.millionths < 0 ? $0.negated : $0 }
                ?? Money(minorUnits: .max, currency: stated.currency)
        } else {
            risk = stated
        }
        let what = first.line.line.kind == .sale ? "sale" : "refund"
        let t = c.p.transactions[key]
        let order = t?.orderId ?? c.order(named: first.line.line.orderId)
        c.add(
            .amountMismatch, first.line.line.channel, user: nil, order: order, tx: first.line.line.transactionId,
            app: t?.keyApp, sorted.flatMap { [$0.line.position, $0.position] }, risk,
            "\(where_(first.line)) says the \(what) was \(stated); the log says \(log)"
                + (sorted.count > 1 ? " (and \(sorted.count - 1) more line\(sorted.count > 2 ? "s" : "") differ)" : ""))
    }

    static func unconfirmedPayments(_ book: StatementBook, _ listed: Set<String>, _ c: inout Context) {
        guard !book.salesCoverage.isEmpty else { return }
        let slack = c.options.statementClockSlack.microseconds
        for t in c.p.transactions.values {
            // A free trial moved no money: no statement lists it.
            guard t.verified, let ch = t.channel, t.revenue != nil, let price = t.price, price.millionths != 0,
                let at = t.purchaseDate ?? t.verifiedAt
            else { continue }
            guard book.covers(ch, app: t.app, from: at.microseconds - slack, to: at.microseconds + slack) else {
                continue
            }
            guard !listed.contains(t.key) else { continue }
            c.add(
                .unconfirmedPayment, ch, user: nil, order: t.orderId, tx: t.transactionId, app: t.keyApp,
                [t.verifiedPosition], price,
                "verified payment of \(price) at \(at.iso8601) is on no \(ch.rawValue) statement, though statements cover that time"
            )
        }
    }
}
