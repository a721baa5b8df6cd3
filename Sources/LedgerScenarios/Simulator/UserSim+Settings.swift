import Foundation
import LedgerCore
import LedgerDomain

extension UserSim {
    // MARK: settings page, fake receipts, stale orders

    /// Bought from the phone's settings page (a promoted in-app purchase): the server hears first,
    /// nothing ties it to a user until the app opens and reports it; then an order is created after
    /// payment. As a fault, the app never reports it: an orphan payment.
    mutating func settingsPage(_ start: Int64, _ d: ProductDefinition, orphan: Bool) {
        var t = start
        let c = d.channel
        let tx = appleTx()
        notify(t, c, appleNotificationId(), "ONE_TIME_CHARGE", tx: tx, original: tx)
        t += int(1...3) * Sim.sec
        let v = verified(t, d, tx: tx, purchased: start - int(5...30) * Sim.sec)
        t += Sim.sec
        if bind(t, v) != nil { preconditionFailure("simulator: settings-page purchase \(tx) bound before any report") }
        if orphan {
            expect(.orphanPayment, c, tx: tx, order: nil, user: nil)
            return
        }
        t += int(2...360) * Sim.minute
        callback(t, c, tx: tx, product: d.storeProductId)
        t += int(1...3) * Sim.sec
        guard let b = bind(t, v), b.method == .createdAfterPayment else {
            preconditionFailure("simulator: \(tx) expected created-after-payment")
        }
        t += int(1...3) * Sim.sec
        grant(t, d, tx: tx, order: b.orderId)
    }

    /// A forged receipt (jailbroken device): the store rejects it (21003) but fulfilment trusted the
    /// client's report and granted; the order-service's timeout closes the order later.
    mutating func fakeReceipt(_ start: Int64) {
        var t = start
        let d = Simulator.def(.appstore, chance(0.5) ? "com.sim.coins300" : "com.sim.coins60")
        let o = orderId()
        createOrder(t, o, d, token: nil)
        t += int(1...5) * Sim.sec
        emit(t, .paymentLaunched(PaymentLaunched(orderId: o, channel: d.channel)))
        t += int(5...20) * Sim.sec
        let tx = appleTx()
        callback(t, d.channel, tx: tx, product: d.storeProductId, order: o, username: o)
        t += int(1...3) * Sim.sec
        emit(
            t,
            .verificationFailed(
                VerificationFailed(channel: d.channel, transactionId: tx, code: 21003, retryable: false, attempt: 1)))
        t += int(1...3) * Sim.sec
        grant(t, d, tx: tx, order: o)
        expect(.grantWithoutPayment, d.channel, tx: tx, order: o, user: uid)
        t += 30 * Sim.minute
        close(t, o, .timeout)
    }

    /// Launched, never paid, and the order-service's timeout job never closed it.
    mutating func staleOrder(_ start: Int64) {
        let d = pick([
            (Simulator.def(.appstore, "com.sim.coins60"), 2), (Simulator.def(.googleplay, "coins_120"), 1),
            (Simulator.def(.wechat, "wx_coins_300"), 1),
        ])
        let o = orderId()
        createOrder(start, o, d, token: d.channel == .wechat ? o : uuid().uuidString.lowercased())
        emit(
            start + int(1...5) * Sim.sec,
            .paymentLaunched(
                PaymentLaunched(
                    orderId: o, channel: d.channel, prepayId: d.channel == .wechat ? "wx\(nn)\(next())" : nil)))
        hasStaleOrder = true
        expect(.staleOrder, d.channel, tx: nil, order: o, user: uid)
    }
}
