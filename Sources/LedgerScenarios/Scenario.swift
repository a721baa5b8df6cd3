import Foundation
import LedgerCore
import LedgerDomain

/// One of the scenarios every release must get right (docs/domain.md), as data: the facts in
/// log order with fixed ids and times, the facts that arrive again (which the log stores once), and
/// the documented outcome at the end and at named moments along the way.
///
/// Ids are scoped by the scenario number (`u08-ivan`, `o08-1`, transaction `2000080000`+k), and the
/// catalogue facts are identical in every scenario, so several scenarios can share one log.
public struct Scenario: Sendable, CustomStringConvertible {
    public let number: Int
    public let name: String
    /// What happens, in a sentence or two, and what must come out.
    public let summary: String
    /// The log, in order: each fact with its `occurredAt`. Every idempotency key is unique.
    public let facts: [(fact: Fact, at: Timestamp)]
    /// Facts delivered again (same content, same idempotency key): an append returns the original.
    public let redeliveries: [Redelivery]
    /// The outcome after a prefix of the log.
    public let checkpoints: [Checkpoint]
    /// The outcome after the whole log.
    public let expected: Expectation

    init(_ number: Int, _ name: String, _ summary: String, _ script: Script, expected: Expectation) {
        self.number = number
        self.name = name
        self.summary = summary
        self.facts = script.facts
        self.redeliveries = script.redeliveries
        self.checkpoints = script.checkpoints
        self.expected = expected
    }

    public var description: String { "\(number). \(name)" }

    /// Folds the first `count` facts (all by default) through `Projections`, positions from 1.
    public func projections(upTo count: Int? = nil) -> Projections {
        var p = Projections()
        for (i, f) in facts.prefix(count ?? facts.count).enumerated() {
            p.apply(f.fact, FactContext(position: Int64(i + 1), occurredAt: f.at))
        }
        return p
    }

    /// `5ce00000-00NN-4000-8000-IIIIIIIIIIII`: scenario NN, fact index I. Redeliveries use `9000`.
    public static func eventId(scenario: Int, index: Int, redelivery: Bool = false) -> UUID {
        UUID(
            uuidString:
                "5ce00000-00\(Script.pad(scenario % 100, 2))-4000-\(redelivery ? "9000" : "8000")-\(Script.pad(index, 12))"
        )!
    }

    /// The log as events to append, with deterministic event ids, the source service as metadata
    /// and the scenario as correlation id.
    public func events() -> [NewEvent] {
        facts.enumerated().map { i, f in
            f.fact.newEvent(
                occurredAt: f.at, eventId: Self.eventId(scenario: number, index: i), metadata: metadata(f.fact))
        }
    }

    /// The redelivered facts as events: new event ids, the original's content and idempotency key.
    public func redeliveryEvents() -> [NewEvent] {
        redeliveries.enumerated().map { k, r in
            let f = facts[r.index]
            return f.fact.newEvent(
                occurredAt: f.at, eventId: Self.eventId(scenario: number, index: k, redelivery: true),
                metadata: metadata(f.fact))
        }
    }

    func metadata(_ fact: Fact) -> EventMetadata {
        let source: String
        switch fact {
        case .productDefined, .productChanged: source = "catalogue"
        case .orderCreated, .paymentLaunched, .orderClosed: source = "order-service"
        case .clientCallbackReceived: source = "client"
        case .storeNotificationReceived(let f): source = f.channel.rawValue
        case .paymentVerified, .verificationFailed: source = "payment-callback-handler"
        case .transactionBound, .entitlementGranted, .entitlementRevoked: source = "fulfilment"
        case .coinsSpent: source = "wallet"
        default: source = "store-notification-receiver"
        }
        return EventMetadata(correlationId: "scenario-\(Script.pad(number, 2))", source: source)
    }
}

public enum Scenarios {
    /// Day 0 of every scenario.
    public static let day0 = Timestamp("2026-03-01T08:00:00Z")!

    /// `day0` plus whole days: the moments the stacking rule is stated at.
    public static func day(_ n: Int64) -> Timestamp { day0.adding(days: n) }

    /// The release scenarios, in order: the twelve of the field reports, then the rules of real store traffic.
    public static let all: [Scenario] = [
        callbackLost, usernameNil, interruptedPurchase, receiptReused, swappedReceipts, orphanFromSettings,
        refundAfterSpend, vipStacking, renewalFoundByPoll, wechatDuplicates, verificationRetry, refundReversed,
        // The rules of real store traffic.
        refundAfterItsReversal, wechatPartialRefund, overGrant, googleVoidedPurchase, grantsByPolicy,
        revocationWithoutRefund,
        upgradeKeepsOldPeriod, googleLinkedToken, introOfferPaidUpFront, sandboxAndFamilySharing, restoreToNewAccount,
        signedOutCallback, unacknowledgedPurchase, sameIdAcrossChannelsAndApps,
        // The stores' signed word: lifecycle states, exact money, notifications kept untranslated.
        graceThenRecovery, accessKeptPastGrace, googleHoldAndPause, familyRevokeNotRevoked, reversalNotRegranted,
        exactStoreMoney,
        untranslatedNotifications, priceIncreaseDeclined,
        // Real histories: apps, moves, what the product is, the acknowledgement's own time, statements as published.
        revocationInTheSecondApp, moveWithRemainingDays, googleOneTimeByToken, acknowledgementByItsOwnTime,
        unrecordedSaleNamesItsOrder,
        statementUnderAnotherName, unconfirmedOnItsOwnDay, renewalRestoredOnASecondAccount,
    ]

    public static func scenario(_ number: Int) -> Scenario { all[number - 1] }
}
