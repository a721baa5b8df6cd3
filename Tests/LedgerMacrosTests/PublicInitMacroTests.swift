import LedgerMacros
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// `@PublicInit` writes the initializer a fact would otherwise list its fields in twice.
@Suite("@PublicInit")
struct PublicInitMacroTests {
    let macros: [String: MacroSpec] = ["PublicInit": MacroSpec(type: PublicInitMacro.self)]

    func expect(_ source: String, expands expanded: String, diagnostics: [DiagnosticSpec] = []) {
        assertMacroExpansion(
            source, expandedSource: expanded, diagnostics: diagnostics, macroSpecs: macros,
            failureHandler: { Issue.record(Comment(rawValue: $0.message)) })
    }

    /// Stored properties in order; an initial value is the default, an optional defaults to nil.
    @Test func storedPropertiesInOrderWithTheirDefaults() {
        expect(
            """
            @PublicInit
            public struct Launched {
                public var orderId: String
                public var attempt: Int64 = 1
                public var prepayId: String?
                public var token: Optional<String>
            }
            """,
            expands: """
                public struct Launched {
                    public var orderId: String
                    public var attempt: Int64 = 1
                    public var prepayId: String?
                    public var token: Optional<String>

                    public init(orderId: String, attempt: Int64 = 1, prepayId: String? = nil, token: Optional<String>) {
                        self.orderId = orderId
                        self.attempt = attempt
                        self.prepayId = prepayId
                        self.token = token
                    }
                }
                """)
    }

    /// A static, a computed property and a `let` with a value are not parameters; an observed one is.
    @Test func onlyWhatAnInitializerSets() {
        expect(
            """
            @PublicInit
            public struct Fact {
                public static let fields = 1
                public let kind = "fact"
                public var userId: String
                public var isEmpty: Bool { userId.isEmpty }
                public var label: String { get { userId } set { userId = newValue } }
                public var note: String { didSet { } }
            }
            """,
            expands: """
                public struct Fact {
                    public static let fields = 1
                    public let kind = "fact"
                    public var userId: String
                    public var isEmpty: Bool { userId.isEmpty }
                    public var label: String { get { userId } set { userId = newValue } }
                    public var note: String { didSet { } }

                    public init(userId: String, note: String) {
                        self.userId = userId
                        self.note = note
                    }
                }
                """)
    }

    /// Where it cannot write an initializer it says why, where it is written.
    @Test func refusesWhatItCannotExpand() {
        expect(
            "@PublicInit\npublic final class Fact {}",
            expands: "public final class Fact {}",
            diagnostics: [DiagnosticSpec(message: "@PublicInit applies to a struct", line: 1, column: 1)])
        expect(
            "@PublicInit\npublic struct Fact {\n    public var id = \"\"\n}",
            expands: "public struct Fact {\n    public var id = \"\"\n}",
            diagnostics: [DiagnosticSpec(message: "@PublicInit needs the type of 'id' written out", line: 1, column: 1)]
        )
    }
}
