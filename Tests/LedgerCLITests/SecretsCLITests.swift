import Foundation
import LedgerTesting
import Testing

/// `ledger` never prints a password, whatever form the database URL takes (the server at port 1
/// is unreachable: the command fails and says why, without the secret).
@Suite("ledger keeps secrets", .timeLimit(.minutes(2)))
struct SecretsCLITests {
    static let urls: [String] = [
        "postgresql://alice:S3cr3t?PW@127.0.0.1:1/ledger",
        "postgresql://alice:S3cr3t#PW@127.0.0.1:1/ledger",
        "postgresql://alice:S3cr3t/PW@127.0.0.1:1/ledger",
        "postgresql://alice:S3cr3tPW@127.0.0.1:1/ledger",
        "postgresql://alice@127.0.0.1:1/ledger?password=S3cr3tPW",
        "postgresql://alice@127.0.0.1:1/ledger?pass%77ord=S3cr3tPW",
        "postgresql://alice@127.0.0.1:1/ledger?PASSWORD=S3cr3tPW",
        "host=127.0.0.1 port=1 user=alice password=S3cr3tPW",
        "host=127.0.0.1 port=1 user=alice password = S3cr3tPW",
        "host=127.0.0.1 port=1 user=alice password='S3cr3t PW'",
        "host=127.0.0.1 port=1 user=alice PASSWORD=S3cr3tPW",
        "host=127.0.0.1 port=1 password=S3cr3tPW oops",
    ]

    @Test(arguments: urls)
    func noCommandPrintsThePassword(_ url: String) async throws {
        let cli = CLI(url: "", schema: "ledger")
        for command in [["read"], ["verify-chain"], ["migrate"]] {
            let out = try await cli.run(
                command, withConnection: false, environment: ["LEDGER_DATABASE_URL": url, "PGCONNECT_TIMEOUT": "3"])
            #expect(out.status != 0)
            #expect(!out.stderr.isEmpty)
            #expect(!(out.stderr + out.stdout).contains("S3cr3t"), "\(command): \(out.stderr)")
        }
    }
}
