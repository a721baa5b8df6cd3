import Foundation
import LedgerCore
import LedgerDomain
import LedgerPostgres
import LedgerLog
@testable import LedgerProjection
import LedgerTesting
import Testing

/// A small purchase history: a coin purchase granted and partly spent, a VIP subscription that
/// renews once, and a refund for a transaction nobody verified (an anomaly).
enum Fixture {
    static let cny = Currency("CNY")!
    static func t(_ s: String) -> Timestamp { Timestamp(s)! }
    static let token = UUID(uuidString: "7d1c1e8a-3f9b-4a51-9a55-2b8f0c6b8e11")!

    static let facts: [(Fact, Timestamp)] = [
        (
            .productDefined(
                ProductDefinition(
                    channel: .appstore, storeProductId: "coins100", entitlement: .coins(100), version: 1,
                    validFrom: t("2026-01-01T00:00:00Z"))), t("2026-01-01T00:00:00Z")
        ),
        (
            .productDefined(
                ProductDefinition(
                    channel: .appstore, storeProductId: "vip_month",
                    entitlement: .subscription(entitlement: "vip", group: "vip", periodDays: 30, rank: 1), version: 1,
                    validFrom: t("2026-01-01T00:00:00Z"))), t("2026-01-01T00:00:01Z")
        ),
        (
            .orderCreated(
                OrderCreated(
                    orderId: "o1", userId: "u1", channel: .appstore, productId: "coins100",
                    price: Money(minorUnits: 600, currency: cny), accountToken: token.lowercased)),
            t("2026-03-31T08:00:00Z")
        ),
        (.paymentLaunched(PaymentLaunched(orderId: "o1", channel: .appstore)), t("2026-03-31T08:00:01Z")),
        (
            .paymentVerified(
                PaymentVerified(
                    channel: .appstore, transactionId: "t1", productId: "coins100",
                    purchaseDate: t("2026-03-31T08:00:30Z"), price: Money(minorUnits: 600, currency: cny),
                    appAccountToken: token)), t("2026-03-31T08:00:31Z")
        ),
        (
            .transactionBound(
                TransactionBound(
                    channel: .appstore, transactionId: "t1", orderId: "o1", userId: "u1", method: .appAccountToken)),
            t("2026-03-31T08:00:32Z")
        ),
        (
            .entitlementGranted(
                EntitlementGranted(
                    grantId: "g1", userId: "u1", transactionId: "t1", orderId: "o1", entitlement: .coins(100))),
            t("2026-03-31T08:00:33Z")
        ),
        (.coinsSpent(CoinsSpent(spendId: "sp1", userId: "u1", amount: 30)), t("2026-03-31T09:00:00Z")),
        (
            .orderCreated(
                OrderCreated(
                    orderId: "o2", userId: "u1", channel: .appstore, productId: "vip_month",
                    price: Money(minorUnits: 1800, currency: cny))), t("2026-04-01T00:00:00Z")
        ),
        (
            .paymentVerified(
                PaymentVerified(
                    channel: .appstore, transactionId: "s1", originalTransactionId: "s1", productId: "vip_month",
                    purchaseDate: t("2026-04-01T00:00:10Z"), expiresDate: t("2026-05-01T00:00:10Z"),
                    price: Money(minorUnits: 1800, currency: cny))), t("2026-04-01T00:00:11Z")
        ),
        (
            .transactionBound(
                TransactionBound(
                    channel: .appstore, transactionId: "s1", orderId: "o2", userId: "u1", method: .applicationUsername)),
            t("2026-04-01T00:00:12Z")
        ),
        (
            .entitlementGranted(
                EntitlementGranted(
                    grantId: "g2", userId: "u1", transactionId: "s1", orderId: "o2",
                    entitlement: .period(entitlement: "vip", days: 30))), t("2026-04-01T00:00:13Z")
        ),
        (
            .refunded(
                Refunded(
                    channel: .appstore, transactionId: "t9", refundId: "r9",
                    amount: Money(minorUnits: 600, currency: cny), refundedAt: t("2026-04-02T00:00:00Z"))),
            t("2026-04-02T00:00:00Z")
        ),
        (
            .subscriptionRenewed(
                SubscriptionRenewed(
                    channel: .appstore, originalTransactionId: "s1", transactionId: "s2", productId: "vip_month",
                    purchaseDate: t("2026-05-01T00:00:10Z"), expiresDate: t("2026-05-31T00:00:10Z"))),
            t("2026-05-01T00:00:11Z")
        ),
        (
            .entitlementGranted(
                EntitlementGranted(
                    grantId: "g3", userId: "u1", transactionId: "s2", entitlement: .period(entitlement: "vip", days: 30)
                )), t("2026-05-01T00:00:12Z")
        ),
    ]

    static func events(_ range: Range<Int>? = nil) -> [NewEvent] {
        let r = range ?? facts.indices
        return r.map { i in
            facts[i].0.newEvent(
                occurredAt: facts[i].1,
                eventId: UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", i + 1))!)
        }
    }
}

@Suite("Projections in PostgreSQL", .timeLimit(.minutes(2)))
struct ProjectionStoreTests {
    /// The store with the fact catalogue's validation (TestDatabase's default accepts any payload).
    static func open(_ config: LedgerConfiguration) async throws -> EventStore {
        var c = config
        c.validation = FactCatalogue.validation()
        return try await EventStore.open(c)
    }

    static func value(_ store: EventStore, _ sql: String) async throws -> String? {
        let r = try await LogReplay(store).queryReadModels(sql)
        return r.count > 0 ? r.string(0, 0) : nil
    }

    @Test func projectorWritesReadModelsAndCheckpoint() async throws {
        try await TestDatabase.withSchema("proj") { config in
            let store = try await Self.open(config)
            _ = try await store.append(Fixture.events())
            let projector = try await Projector.start(store)
            #expect(try await projector.catchUp(batchSize: 4) == Int64(Fixture.facts.count))
            await projector.close()
            #expect(
                try await Self.value(store, "SELECT status FROM $schema.rm_orders WHERE order_id = 'o1'") == "fulfilled"
            )
            #expect(
                try await Self.value(store, "SELECT coin_balance FROM $schema.rm_users WHERE user_id = 'u1'") == "70")
            #expect(
                try await Self.value(
                    store,
                    "SELECT owed_status || ' ' || owed_units || ' ' || granted_units FROM $schema.rm_transactions WHERE transaction_id = 't1'"
                ) == "ok 100 100")
            // The renewal belongs to the subscription's user without a binding of its own.
            #expect(
                try await Self.value(
                    store,
                    "SELECT user_id || ' ' || owed_status FROM $schema.rm_transactions WHERE transaction_id = 's2'")
                    == "u1 ok")
            #expect(
                try await Self.value(
                    store,
                    "SELECT status || ' ' || expires_at::text FROM $schema.rm_subscriptions WHERE subscription_id = 'appstore:s1'"
                ) == "active 2026-05-31 00:00:10+00")
            #expect(
                try await Self.value(
                    store, "SELECT user_id FROM $schema.rm_subscriptions WHERE subscription_id = 'appstore:s1'") == "u1"
            )
            #expect(
                try await Self.value(
                    store,
                    "SELECT total_days FROM $schema.rm_entitlement_periods WHERE user_id = 'u1' AND entitlement = 'vip'"
                ) == "60")
            #expect(
                try await Self.value(store, "SELECT kind FROM $schema.rm_anomalies") == "refund-for-unknown-transaction"
            )
            #expect(try await LogReplay(store).checkpoints().values.allSatisfy { $0 == Int64(Fixture.facts.count) })
            await store.close()
        }
    }

    @Test func projectorResumesWhereTheTablesAreAndEqualsARebuild() async throws {
        try await TestDatabase.withSchema("resume") { config in
            let store = try await Self.open(config)
            _ = try await store.append(Fixture.events(0..<7))
            let first = try await Projector.start(store)
            try await first.catchUp(batchSize: 3)
            await first.close()  // as if it stopped here
            _ = try await store.append(Fixture.events(7..<Fixture.facts.count))
            let second = try await Projector.start(store)
            #expect(await second.position == 7)
            #expect(try await second.catchUp() == Int64(Fixture.facts.count - 7))
            await second.close()
            // Resumed incrementally, the tables equal a rebuild from scratch: nothing skipped or doubled.
            let verify = try await LogReplay(store).rebuild(RebuildOptions(verify: true))
            #expect(verify.position == Int64(Fixture.facts.count))
            #expect(!verify.hasDifferences, "\(verify.tables.flatMap(\.differences))")
            await store.close()
        }
    }

    @Test func followingProjectorAppliesNewFactsAsTheyArrive() async throws {
        try await TestDatabase.withSchema("follow") { config in
            let store = try await Self.open(config)
            _ = try await store.append(Fixture.events(0..<3))
            let projector = try await Projector.start(store)
            // It never polls within the test's time limit: only NOTIFY can wake it. If NOTIFY did not
            // work, the loop below would run until the time limit fails the test.
            try await projector.catchUp()
            #expect(await projector.position == 3)
            let following = Task { try await projector.follow(pollInterval: .seconds(86_400)) }
            defer { following.cancel() }
            _ = try await store.append(Fixture.events(3..<Fixture.facts.count))
            var status: String?
            while true {
                status = try await Self.value(store, "SELECT status FROM $schema.rm_orders WHERE order_id = 'o2'")
                if status == "fulfilled",
                    try await LogReplay(store).checkpoints().values.allSatisfy({ $0 == Int64(Fixture.facts.count) })
                {
                    break
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(status == "fulfilled")
            following.cancel()
            _ = try? await following.value
            await projector.close()
            await store.close()
        }
    }

    @Test func onlyOneProjectorAtATime() async throws {
        try await TestDatabase.withSchema("lock") { config in
            let store = try await Self.open(config)
            let first = try await Projector.start(store)
            await #expect(throws: ProjectorBusy.self) { _ = try await Projector.start(store) }
            await #expect(throws: ProjectorBusy.self) { _ = try await LogReplay(store).rebuild(RebuildOptions()) }
            await first.close()
            let second = try await Projector.start(store)
            await second.close()
            await store.close()
        }
    }

    @Test func rebuildIsDeterministicSwapsAndVerifyFindsDifferences() async throws {
        try await TestDatabase.withSchema("rebuild") { config in
            let store = try await Self.open(config)
            _ = try await store.append(Fixture.events())
            let a = try await LogReplay(store).rebuild(RebuildOptions())
            let b = try await LogReplay(store).rebuild(RebuildOptions())
            #expect(a.swapped && b.swapped)
            #expect(a.tables.map(\.checksum) == b.tables.map(\.checksum))
            #expect(a.tables.first { $0.table == "rm_orders" }?.rows == 2)
            #expect(
                try await Self.value(store, "SELECT status FROM $schema.rm_orders WHERE order_id = 'o2'") == "fulfilled"
            )
            // The swapped-in tables keep their indexes' names and the reader's grant.
            let idx = try await LogReplay(store).queryReadModels(
                "SELECT indexname FROM pg_indexes WHERE schemaname = '\(config.schema)' AND tablename = 'rm_orders' ORDER BY 1"
            )
            #expect(idx.rows.compactMap { $0[0] }.allSatisfy { !$0.contains("rebuild") })
            #expect(idx.count == 2, "the primary key and the user index: \(idx.rows)")
            let txIndexes = try await LogReplay(store).queryReadModels(
                "SELECT indexname FROM pg_indexes WHERE schemaname = '\(config.schema)' AND tablename = 'rm_transactions' ORDER BY 1"
            )
            #expect(
                txIndexes.rows.compactMap { $0[0] } == [
                    "rm_transactions_id", "rm_transactions_original", "rm_transactions_pkey", "rm_transactions_user",
                ])
            // The primary key is a constraint again after the swap, not just a unique index.
            #expect(
                try await Self.value(
                    store,
                    "SELECT conname FROM pg_constraint WHERE conrelid = '\(config.schema).rm_orders'::regclass AND contype = 'p'"
                ) == "rm_orders_pkey")
            #expect(
                try await Self.value(
                    store, "SELECT has_table_privilege('ledger_reader', '\(config.schema).rm_orders', 'SELECT')::text")
                    == "true")

            let clean = try await LogReplay(store).rebuild(RebuildOptions(verify: true))
            #expect(!clean.hasDifferences)
            let admin = try await TestDatabase.admin(config)
            try await admin.execute(
                "UPDATE \(quoteIdentifier(config.schema)).rm_orders SET status = 'paid' WHERE order_id = 'o1'")
            try await admin.execute("DELETE FROM \(quoteIdentifier(config.schema)).rm_users")
            await admin.close()
            let dirty = try await LogReplay(store).rebuild(RebuildOptions(verify: true))
            #expect(dirty.hasDifferences)
            let orders = try #require(dirty.tables.first { $0.table == "rm_orders" })
            #expect(orders.differingRows == 1)
            #expect(orders.differences == ["o1: status live=\"paid\" rebuilt=\"fulfilled\""])
            let users = try #require(dirty.tables.first { $0.table == "rm_users" })
            #expect(users.differences == ["u1: only in the rebuilt table"])
            // Verify swapped nothing: the tampered row is still live.
            #expect(try await Self.value(store, "SELECT status FROM $schema.rm_orders WHERE order_id = 'o1'") == "paid")
            await store.close()
        }
    }

    /// A large rebuild writes its shadow tables on two connections; written so on a small log, the
    /// tables, their checksums, indexes and primary keys are those of a rebuild on one, and a
    /// verify on two finds the same differences.
    @Test func aRebuildOnTwoConnectionsEqualsOneOnOne() async throws {
        try await TestDatabase.withSchema("rebuild_two") { config in
            let store = try await Self.open(config)
            _ = try await store.append(Fixture.events())
            var two = RebuildOptions()
            two.rowsForSecondConnection = 0
            func indexes() async throws -> [String] {
                try await LogReplay(store).queryReadModels(
                    """
                    SELECT tablename || ' ' || indexname || ' ' || coalesce((SELECT contype::text FROM pg_constraint
                      WHERE conname = indexname AND connamespace = '\(config.schema)'::regnamespace), '')
                    FROM pg_indexes WHERE schemaname = '\(config.schema)' AND tablename LIKE 'rm_%' ORDER BY 1
                    """
                ).rows.compactMap { $0[0] }
            }
            let one = try await LogReplay(store).rebuild(RebuildOptions())
            let oneIndexes = try await indexes()
            let onTwo = try await LogReplay(store).rebuild(two)
            #expect(one.writeConnections == 1 && onTwo.writeConnections == 2)
            #expect(onTwo.swapped && onTwo.tables.map(\.table) == one.tables.map(\.table))
            #expect(onTwo.tables.map(\.checksum) == one.tables.map(\.checksum))
            #expect(onTwo.tables.contains { $0.rows > 0 })
            #expect(try await indexes() == oneIndexes && oneIndexes.contains("rm_orders rm_orders_pkey p"))

            let admin = try await TestDatabase.admin(config)
            try await admin.execute(
                "UPDATE \(quoteIdentifier(config.schema)).rm_orders SET status = 'paid' WHERE order_id = 'o1'")
            try await admin.execute("DELETE FROM \(quoteIdentifier(config.schema)).rm_users")
            await admin.close()
            two.verify = true
            let dirty = try await LogReplay(store).rebuild(two)
            #expect(!dirty.swapped && dirty.hasDifferences && dirty.writeConnections == 2)
            #expect(
                dirty.tables.first { $0.table == "rm_orders" }?.differences == [
                    "o1: status live=\"paid\" rebuilt=\"fulfilled\""
                ])
            #expect(dirty.tables.first { $0.table == "rm_users" }?.differences == ["u1: only in the rebuilt table"])
            await store.close()
        }
    }

    @Test func rebuildToAPastPositionShowsThatMoment() async throws {
        try await TestDatabase.withSchema("asof") { config in
            let store = try await Self.open(config)
            _ = try await store.append(Fixture.events())
            let r = try await LogReplay(store).rebuild(RebuildOptions(models: [.orders, .entitlements], through: 6))
            #expect(r.position == 6)
            #expect(try await Self.value(store, "SELECT status FROM $schema.rm_orders WHERE order_id = 'o1'") == "paid")
            #expect(try await Self.value(store, "SELECT count(*) FROM $schema.rm_orders") == "1")
            let cps = try await LogReplay(store).checkpoints()
            #expect(cps[.orders] == 6 && cps[.entitlements] == 6 && cps[.transactions] == 0)
            // Verify compares like with like: with the models at different positions it refuses
            // (until they are projected: not a wrong request).
            await #expect(throws: ReadModelsApart.self) {
                _ = try await LogReplay(store).rebuild(RebuildOptions(verify: true))
            }
            await #expect(throws: RebuildRefused.self) {
                _ = try await LogReplay(store).rebuild(RebuildOptions(models: [.orders], through: 6, verify: true))
            }
            #expect(
                !(try await LogReplay(store).rebuild(RebuildOptions(models: [.orders, .entitlements], verify: true)))
                    .hasDifferences)
            // A projector started now brings every model to the head; batches stop at each checkpoint.
            let projector = try await Projector.start(store)
            try await projector.catchUp()
            await projector.close()
            #expect(try await LogReplay(store).checkpoints().values.allSatisfy { $0 == Int64(Fixture.facts.count) })
            #expect(!(try await LogReplay(store).rebuild(RebuildOptions(verify: true))).hasDifferences)
            #expect(try await LogReplay(store).position(asOf: Timestamp("2001-01-01T00:00:00Z")!) == 0)
            await store.close()
        }
    }

    /// Appended one by one, the events have increasing recorded times: as of each one's time the
    /// log ends exactly at it (not at the head, not before it), and a microsecond earlier, before it.
    @Test func positionAsOfATimeIsTheLastEventRecordedByThen() async throws {
        try await TestDatabase.withSchema("asoftime") { config in
            let store = try await Self.open(config)
            for e in Fixture.events(0..<6) { _ = try await store.append([e]) }
            let rows = try await store.readAll(after: 0)
            #expect(rows.count == 6)
            for row in rows {
                let expected = rows.filter { $0.recordedAt <= row.recordedAt }.map(\.position).max()!
                #expect(try await LogReplay(store).position(asOf: row.recordedAt) == expected)
                let before = Timestamp(microsecondsSince1970: row.recordedAt.microseconds - 1)
                #expect(
                    try await LogReplay(store).position(asOf: before) == rows.filter { $0.recordedAt <= before }.map(
                        \.position
                    ).max() ?? 0)
            }
            // The check above means something only if the times differ: the third is not the head.
            #expect(try await LogReplay(store).position(asOf: rows[2].recordedAt) < 6)
            await store.close()
        }
    }

    @Test func scansUndoCopyEscapingExactly() async throws {
        try await TestDatabase.withSchema("escapes") { config in
            let store = try await Self.open(config)
            // Facts refuse control characters, but quotes and backslashes reach the payload's JSON
            // text (escaped there), which COPY escapes again.
            let item = "sticker \"pack\" \\ back\\slash\\n 雪 \\t"
            let spend = Fact.coinsSpent(CoinsSpent(spendId: "sp\\1", userId: "u1", amount: 5, item: item))
            _ = try await store.append([spend.newEvent(occurredAt: Timestamp("2026-03-31T08:00:00Z")!)])
            let stored = try await store.readAll(after: 0)
            let scanned = Locked<[RecordedEvent]>([])
            try await store.scan { e in
                scanned.withLock { $0.append(e) }
                return true
            }
            #expect(scanned.withLock { $0 } == stored)
            let facts = Locked<[Fact]>([])
            try await LogReplay(store).scanFacts { f in
                if case .success(let fact) = f.fact { facts.withLock { $0.append(fact) } }
            }
            #expect(facts.withLock { $0 } == [spend])
            #expect(try await store.verifyChain().isIntact)
            await store.close()
        }
    }

    @Test func arrayColumnsRoundTripAwkwardValues() async throws {
        try await TestDatabase.withSchema("arrays") { config in
            let store = try await Self.open(config)
            let awkward = #"a,b"c\d{e} 雪"#
            let facts: [Fact] = [
                .entitlementGranted(
                    EntitlementGranted(grantId: "g1", userId: "u1", transactionId: "t1", entitlement: .feature(awkward))
                ),
                .entitlementGranted(
                    EntitlementGranted(grantId: "g2", userId: "u1", transactionId: "t2", entitlement: .feature("plain"))
                ),
            ]
            _ = try await store.append(facts.map { $0.newEvent(occurredAt: Timestamp("2026-03-31T08:00:00Z")!) })
            let projector = try await Projector.start(store)
            try await projector.catchUp()
            await projector.close()
            let r = try await LogReplay(store).queryReadModels(
                "SELECT array_to_json(features)::text, array_to_json(positions)::text FROM $schema.rm_users WHERE user_id = 'u1'"
            )
            let features = try JSONValue.parse(r.string(0, 0) ?? "")
            #expect(features == .array([.string(awkward), .string("plain")]))
            #expect(r.string(0, 1) == "[1,2]")
            #expect(!(try await LogReplay(store).rebuild(RebuildOptions(verify: true))).hasDifferences)
            await store.close()
        }
    }

    @Test func aFactWithABadFieldIsRefusedAndNothingIsWritten() async throws {
        try await TestDatabase.withSchema("badfact") { config in
            let store = try await Self.open(config)
            var bad = Fixture.events(0..<3)
            bad[2].payload = .makeObject([
                ("orderId", .string("o1")), ("userId", .string("u1")), ("channel", .string("appstore")),
                ("productId", .string("coins100")), ("amount", .int(-5)), ("currency", .string("CNY")),
            ])
            do {
                _ = try await store.append(bad)
                Issue.record("a negative amount was accepted")
            } catch let error as LedgerError {
                guard case .invalidEvent(let e) = error else {
                    Issue.record("\(error)")
                    return
                }
                #expect(e.field == "payload.amount")
                #expect(e.eventId == bad[2].eventId.lowercased)
            }
            #expect(try await TestDatabase.storedEventRows(config) == 0)
            #expect(try await store.headPosition() == 0)
            await store.close()
        }
    }

    @Test("the longest accepted period, granted the most times, is projected and rebuilt (the end held at 9999-12-31)")
    func extremeGrantIsProjected() async throws {
        try await TestDatabase.withSchema("extreme") { config in
            let store = try await Self.open(config)
            let grant = Fact.entitlementGranted(
                EntitlementGranted(
                    grantId: "g1", userId: "u1", transactionId: "t1",
                    entitlement: .period(entitlement: "vip", days: 36_600), quantity: 2_918))
            let coins = Fact.entitlementGranted(
                EntitlementGranted(
                    grantId: "g2", userId: "u1", transactionId: "t2",
                    entitlement: .coins(1_000_000_000), quantity: 10_000))
            _ = try await store.append([
                grant.newEvent(occurredAt: Fixture.t("2026-01-01T00:00:00Z")),
                coins.newEvent(occurredAt: Fixture.t("2026-01-01T00:00:01Z")),
            ])
            let projector = try await Projector.start(store)
            #expect(try await projector.catchUp() == 2)
            await projector.close()
            #expect(
                try await Self.value(
                    store,
                    "SELECT total_days || ' ' || ends_at::text FROM $schema.rm_entitlement_periods WHERE user_id = 'u1'"
                )
                    == "106798800 9999-12-31 23:59:59+00")
            #expect(
                try await Self.value(store, "SELECT coin_balance FROM $schema.rm_users WHERE user_id = 'u1'")
                    == "10000000000000")
            let verify = try await LogReplay(store).rebuild(RebuildOptions(verify: true))
            #expect(!verify.hasDifferences)
            await store.close()
        }
    }
}
