import Foundation
import LedgerCore
import LedgerDomain

/// Which audit findings to inject into a simulated history, and how often:
/// a rate is the probability that one purchase carries that fault. At most one fault per purchase.
///
/// Text form: `none`, `all=0.01`, `double-grant=0.02,missing-grant=0.01` (later entries override
/// earlier ones, so `all=0.01,stale-order=0` works). `chain-broken` is accepted and kept for the CLI,
/// which tampers with the stored log for it; the simulator itself never injects it.
public struct FaultSpec: Sendable, Hashable, CustomStringConvertible {
    public private(set) var rates: [FindingKind: Double]

    /// The kinds the simulator injects into the facts themselves.
    public static let injectable: [FindingKind] = FindingKind.allCases.filter {
        $0 != .chainBroken && !$0.isReconciliation
    }
    public static let none = FaultSpec()

    public init() { rates = [:] }

    /// Rates by kind; each must be in 0...1 and the injectable ones must add up to at most 1.
    public init(rates: [FindingKind: Double]) throws {
        for (k, r) in rates where !(r.isFinite && r >= 0 && r <= 1) {
            throw FaultSpecError("bad rate \(r) for \(k.rawValue): must be a number between 0 and 1")
        }
        let total = FaultSpec.injectable.reduce(0.0) { $0 + (rates[$1] ?? 0) }
        if total > 1 + 1e-9 {
            throw FaultSpecError("fault rates add up to \(total) per purchase; at most 1 (one fault per purchase)")
        }
        self.rates = rates.filter { $0.value > 0 }
    }

    public func rate(_ kind: FindingKind) -> Double { rates[kind] ?? 0 }
    public var isNone: Bool { rates.isEmpty }

    public var description: String {
        let parts = FindingKind.allCases.compactMap { k in rates[k].map { "\(k.rawValue)=\($0)" } }
        return parts.isEmpty ? "none" : parts.joined(separator: ",")
    }

    /// Parses `none`, `all=RATE` or a comma-separated list of `kind=RATE`.
    public static func parse(_ text: String) throws -> FaultSpec {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty || trimmed.lowercased() == "none" { return FaultSpec() }
        var rates: [FindingKind: Double] = [:]
        let known = (["all", "none"] + FindingKind.allCases.map(\.rawValue)).joined(separator: ", ")
        for raw in trimmed.split(separator: ",", omittingEmptySubsequences: false) {
            let entry = raw.trimmingCharacters(in: .whitespaces)
            guard !entry.isEmpty else { throw FaultSpecError("empty entry in fault spec \"\(text)\"") }
            let pieces = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = pieces[0].trimmingCharacters(in: .whitespaces).lowercased()
            if name == "none" { throw FaultSpecError("\"none\" cannot be combined with other faults") }
            guard name == "all" || FindingKind(rawValue: name) != nil else {
                throw FaultSpecError("unknown fault kind \"\(name)\" (known: \(known))")
            }
            guard pieces.count == 2 else {
                throw FaultSpecError("fault kind \"\(name)\" has no rate: write \(name)=0.01")
            }
            let rateText = pieces[1].trimmingCharacters(in: .whitespaces)
            guard let rate = Double(rateText), rate.isFinite, rate >= 0, rate <= 1 else {
                throw FaultSpecError("bad rate \"\(rateText)\" for \(name): must be a number between 0 and 1")
            }
            if name == "all" {
                for k in FindingKind.allCases { rates[k] = rate }
            } else if let k = FindingKind(rawValue: name) {
                rates[k] = rate
            }
        }
        return try FaultSpec(rates: rates)
    }
}

public struct FaultSpecError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A finding the simulator injected on purpose: the audit must report exactly these.
public struct ExpectedFinding: Hashable, Sendable, CustomStringConvertible {
    public var kind: FindingKind
    public var channel: Channel?
    public var transactionId: String?
    public var orderId: String?
    public var userId: String?
    /// The app of a transaction whose id another app's had first (`TransactionView.keyApp`).
    public var app: String?

    public init(
        kind: FindingKind, channel: Channel?, transactionId: String?, orderId: String?, userId: String?,
        app: String? = nil
    ) {
        self.kind = kind
        self.channel = channel
        self.transactionId = transactionId
        self.orderId = orderId
        self.userId = userId
        self.app = app
    }

    /// Built exactly like `Finding.key`.
    public var key: String {
        "\(kind.rawValue)|\(channel?.rawValue ?? "")|\(transactionId ?? "")|\(orderId ?? "")|\(userId ?? "")"
            + (app.map { "|\($0)" } ?? "")
    }

    public var description: String { key }
}
