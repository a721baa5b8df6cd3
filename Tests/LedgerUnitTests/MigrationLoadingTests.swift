import Foundation
import LedgerCore
import LedgerLog
import LedgerProjection
import Testing

/// Migration files: names, order, checksums, and the sets of the log and the read models.
@Suite("Migration loading")
struct MigrationLoadingTests {
    /// A fresh folder holding `files` (name: contents), removed after `body`.
    static func withFolder<T>(_ files: [String: String], _ body: (URL) throws -> T) throws -> T {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ledger-migrations-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        for (name, text) in files { try Data(text.utf8).write(to: dir.appendingPathComponent(name)) }
        return try body(dir)
    }

    @Test func filesLoadInVersionOrderWithTheirChecksums() throws {
        let files = [
            "0010_later.sql": "SELECT 10;\n", "0002_second.sql": "SELECT 2;\n", "0001_first.sql": "SELECT 1;\n",
            "README.md": "not SQL",
        ]
        let loaded = try Self.withFolder(files) { try Migration.load(directory: $0) }
        #expect(loaded.map(\.version) == [1, 2, 10])
        #expect(loaded.map(\.name) == ["0001_first", "0002_second", "0010_later"])
        #expect(loaded.map(\.sql) == ["SELECT 1;\n", "SELECT 2;\n", "SELECT 10;\n"])
        #expect(loaded[0].checksum == SHA256.hash(Array("SELECT 1;\n".utf8)).hexString)
    }

    @Test(arguments: [
        (["first.sql": ""], "migration files are named NNNN_description.sql"),
        (["v1_first.sql": ""], "migration files are named NNNN_description.sql"),
        (["0001_a.sql": "", "0001_b.sql": ""], "0001_a and 0001_b share version 1"),
    ])
    func badFolderIsRefused(_ files: [String: String], _ problem: String) throws {
        #expect {
            _ = try Self.withFolder(files) { try Migration.load(directory: $0) }
        } throws: { error in
            guard case .migration(let message)? = error as? LedgerError else { return false }
            return message.contains(problem)
        }
    }

    @Test func setsCombineInVersionOrder() throws {
        let m = { (v: Int) in Migration(version: v, name: String(format: "%04d_m", v), sql: "SELECT \(v);") }
        #expect(try Migration.combining([[m(3), m(4)], [m(1), m(2)]]).map(\.version) == [1, 2, 3, 4])
        #expect(throws: LedgerError.self) { try Migration.combining([[m(1), m(2)], [m(2)]]) }
    }

    /// The shipped files, as existing databases recorded them: a changed byte is refused by every
    /// ledger already migrated, so a change goes in a new file.
    @Test func shippedMigrationsAreUnchanged() throws {
        let log = try Migration.eventLog()
        let readModels = try Migration.readModels()
        #expect(
            log.map(\.name) == [
                "0001_event_log", "0004_least_privilege", "0010_store_notification_payloads", "0011_append_function",
                "0012_append_id_and_key_of_two_events", "0013_sealed_appends", "0015_inlined_chain_hash",
                "0016_append_events_without_subtransactions", "0018_claims_with_events_and_request_keys",
                "0019_append_events_at_commit", "0020_pending_events_in_their_claims", "0021_sealer_rounds",
                "0022_sealer_catch_up", "0023_functions_search_temporary_tables_last", "0024_checked_once",
                "0025_chain_texts_once", "0026_newest_claim_writer",
            ])
        #expect(
            readModels.map(\.name) == [
                "0002_read_models", "0003_read_model_indexes", "0005_projector_role", "0006_transaction_keys",
                "0014_projector_snapshots", "0017_subscription_access",
            ])
        #expect(
            try Migration.eventLogAndReadModels().map(\.checksum) == [
                "7c3cd68e7db768c8b513ff1412ec5ebf59b50edc086fe3d9578c464b81b45fd1",
                "124ab217f22bd1c1946fe0aa2c04c697cdaeef2e83c29afef6e578e4fde2e900",
                "b35837ea722dcf3eea5a061817fa6cf2037b962546d2c64b2c19fe0a44992ba9",
                "de45cf6a258ab69705295c443ab90f91768faf65b610ae7a72f99747dfc76d37",
                "a186d6e9480deedaf77db4c8fe6a109276bf40af49ac0fcc528381f266cef257",
                "c16f53ba2e408b66e1e003c3957c97d6b53e40208d35b5f84502f46b1d844131",
                "657085954ac06f79f68db5dbd63c8885c37ce107f388d374d0b78655ca299fa8",
                "38eaf55f8302e014d39afb3d349b3a7835cc6776ff04f421511fca4108f194e6",
                "5f6c9f10ab0d0510ad4838c23071ebe0d65f9883c071e9d40e59191a622d7947",
                "4f806436b6967ae02023b7a67bd9780259c2d1469322b7cc0d18b9a88198e2cd",
                "94349442f829ef66941ee3a524edf7bd90b1594a393dcd79a2a774ca4f5ea07f",
                "db37170d58b716385f4b4d627e3612b0fbd83188e5d603f7877a9acaa965d6f6",
                "84fa805c64ebb73b78c3bab6e331d9388f854fe78e45254fe5269cc3d482de75",
                "dcab80616dae700fdd01c9cb6d64610ec2bee0fa191231870e3b724bb1be65b4",
                "41e85a6d4f37c434bf196e999a97ed5314e9ddede35f2c549313eae6d1dd3f1c",
                "003dd8f0c54625b50a3f8abb4d3da1e0d99f7d8b35eb4a32bdc569c8d23ee4df",
                "15118f3b02c60859db5bfa28f460ce70eb418fe22fff147f9f4b49c08bdbe530",
                "acad883bd107d91bc91f2743f295a070dc7184bf6eefdac6bac31c6b74100e5e",
                "5dcc02989da8a1e19c210e620a589f86a6661add390a2544b059cca595294c2c",
                "897b84ed9ab9c2be2b2bd4ccb5ca3aa0a0fc15ab6d0994e15b4bd994a7c932d6",
                "c4b78ac14cbe9f64c869f431b64e268cdca62d0cae3043699c3c8ba1c2194c4b",
                "aebbec8ebb1dd8559a1c7df01cd68328e7e34278275b3ec050af6194bd628c17",
                "5cdb71844a185d59a94ab7dc90c0984ca0e665299fe68447425de977ba9d03b8",
            ])
    }

    /// schema/migrations and schema/functions (the published copies: links to the modules' files)
    /// list exactly the shipped migrations and functions, each the same bytes.
    @Test func thePublishedFolderListsEveryShippedMigration() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("schema/migrations")
        let published = try Migration.load(
            directory: folder,
            functions: try SQLFunction.load(
                directory: folder.deletingLastPathComponent().appendingPathComponent("functions")))
        let shipped = try Migration.eventLogAndReadModels()
        #expect(published.map(\.name) == shipped.map(\.name))
        #expect(published.map(\.checksum) == shipped.map(\.checksum))
        #expect(published.map(\.sql) == shipped.map(\.sql))
    }
}
