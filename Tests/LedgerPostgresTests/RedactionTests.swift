import LedgerPostgres
import Testing

/// Every form of password libpq accepts (and the messages that quote them) comes out hidden.
@Suite("Redaction")
struct RedactionTests {
    static let secret = "S3cr3tPW"

    /// Connection strings and messages, each holding `secret` (or a spelling of it) somewhere.
    static let forms: [String] = [
        "postgresql://alice:S3cr3t?PW@127.0.0.1:1/ledger",
        "postgresql://alice:S3cr3t#PW@127.0.0.1:1/ledger",
        "postgresql://alice:S3cr3t/PW@127.0.0.1:1/ledger",
        "postgresql://alice:S3cr3t@PW@127.0.0.1:1/ledger",
        "postgres://alice:S3cr3tPW@db.example:5432/ledger?sslmode=require",
        "postgresql://:S3cr3tPW@[::1]:5432/ledger",
        "postgresql://alice:S3cr3t%40PW@h/db",
        "postgresql://alice@h/db?password=S3cr3tPW&sslmode=disable",
        "postgresql://alice@h/db?pass%77ord=S3cr3tPW",
        "postgresql://alice@h/db?%70%61ssword=S3cr3tPW",
        "postgresql:///ledger?host=/tmp&PASSWORD=S3cr3tPW",
        "postgresql://alice@h/db?sslpassword=S3cr3tPW",
        "host=127.0.0.1 port=1 password=S3cr3tPW user=alice",
        "host=127.0.0.1 password = S3cr3tPW user=alice",
        "host=127.0.0.1\tpassword\t=\tS3cr3tPW",
        "password=S3cr3tPW host=h",
        "host=h password='S3cr3tPW and spaces'",
        "host=h password='it\\'s S3cr3tPW'",
        "host=h PASSWORD=S3cr3tPW",
        "host=h sslpassword=S3cr3tPW",
        "missing \"=\" after \"postgresql://alice:S3cr3tPW@h\" in connection info string",
        "invalid connection option \"x\" in \"host=h password=S3cr3tPW x\"",
    ]

    @Test(arguments: forms)
    func passwordsAreHidden(_ text: String) {
        let out = ConnectionString.redacted(text)
        #expect(!out.contains(Self.secret) && !out.contains("S3cr3t"), "\(out)")
        #expect(out.contains("***"), "\(out)")
    }

    @Test func whatIsNotASecretStays() {
        #expect(ConnectionString.redacted("host=db password='a b' user=x") == "host=db password=*** user=x")
        #expect(
            ConnectionString.redacted("postgresql://u:p%40ss@h:5/db?password=zz&sslmode=require")
                == "postgresql://u:***@h:5/db?password=***&sslmode=require")
        #expect(
            ConnectionString.redacted("postgresql://u@h:5/db?passwordless=1&user=x")
                == "postgresql://u@h:5/db?passwordless=1&user=x")
        #expect(ConnectionString.redacted("host=h user=alice dbname=ledger") == "host=h user=alice dbname=ledger")
        #expect(ConnectionString.redacted("appended 3 events; at position 7") == "appended 3 events; at position 7")
    }

    /// In a keyword/value string `&` is part of a value and a backslash escapes a space: the whole
    /// value is hidden, no tail left (in a URL's query, `&` still ends the parameter).
    @Test func aKeywordValueIsHiddenToItsEnd() {
        #expect(ConnectionString.redacted("host=h password=S3cr3t&PW9 user=x") == "host=h password=*** user=x")
        #expect(ConnectionString.redacted("host=h password=S3cr3t\\ PW10 user=x") == "host=h password=*** user=x")
        #expect(ConnectionString.redacted("password=S3cr3t\\ PW10") == "password=***")
        #expect(ConnectionString.redacted("host=h sslpassword=a&b\\ c&d") == "host=h sslpassword=***")
        #expect(
            ConnectionString.redacted("postgresql://u@h/db?password=S3cr3t&sslmode=require#x")
                == "postgresql://u@h/db?password=***&sslmode=require#x")
    }

    /// libpq may quote a fragment of a string it cannot parse: the literal value is hidden too.
    @Test func fragmentsOfTheConnectionStringAreHiddenInItsMessages() {
        let url = "postgresql://alice:S3cr3t/PW@127.0.0.1:1/ledger"
        let message = "invalid integer value \"S3cr3t\" for connection option \"port\""
        #expect(!ConnectionString.redacted(message, quoting: url).contains("S3cr3t"))
        #expect(
            !ConnectionString.redacted("bad value \"S3cr3tPW\"", quoting: "host=h password=S3cr3tPW").contains("S3cr3t")
        )
    }
}
