import SwiftCompilerPlugin
import SwiftSyntax
import SwiftSyntaxMacros

/// `@PublicInit` on a struct: a public memberwise initializer, its parameters the stored
/// properties in the order they are declared. A parameter defaults to the property's initial
/// value when it has one, and an optional property's to `nil`. A `let` with a value, a static
/// and a computed property are not parameters.
///
/// A fact's fields are then written once as properties (and once, by key path, in its field
/// table, which says how each is written in a payload), not again as an initializer's
/// parameters and assignments.
public struct PublicInitMacro: MemberMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard declaration.is(StructDeclSyntax.self) else {
            throw MacroError(description: "@PublicInit applies to a struct")
        }
        var parameters: [String] = []
        var assignments: [String] = []
        for member in declaration.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self), isStored(variable) else { continue }
            let isLet = variable.bindingSpecifier.tokenKind == .keyword(.let)
            for binding in variable.bindings {
                guard let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.trimmedDescription else {
                    throw MacroError(description: "@PublicInit needs one name per stored property")
                }
                if isLet && binding.initializer != nil { continue }
                guard let type = binding.typeAnnotation?.type.trimmed else {
                    throw MacroError(description: "@PublicInit needs the type of '\(name)' written out")
                }
                var parameter = "\(name): \(type)"
                if let value = binding.initializer?.value.trimmedDescription {
                    parameter += " = \(value)"
                } else if type.is(OptionalTypeSyntax.self) {
                    parameter += " = nil"
                }
                parameters.append(parameter)
                assignments.append("self.\(name) = \(name)")
            }
        }
        let body = assignments.map { "    \($0)" }.joined(separator: "\n")
        let signature = parameters.joined(separator: ", ")
        return [DeclSyntax(stringLiteral: "public init(\(signature)) {\n\(body)\n}")]
    }

    /// A stored property: not static, and without accessors other than observers.
    private static func isStored(_ variable: VariableDeclSyntax) -> Bool {
        if variable.modifiers.contains(where: { $0.name.tokenKind == .keyword(.static) }) { return false }
        for binding in variable.bindings {
            switch binding.accessorBlock?.accessors {
            case nil:
                continue
            case .getter:
                return false
            case .accessors(let accessors):
                let observers: Set<TokenKind> = [.keyword(.willSet), .keyword(.didSet)]
                if accessors.contains(where: { !observers.contains($0.accessorSpecifier.tokenKind) }) { return false }
            }
        }
        return true
    }
}

/// Why `@PublicInit` cannot expand: the compiler shows `description` at the attribute.
struct MacroError: Error, CustomStringConvertible {
    let description: String
}

@main
struct LedgerMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [PublicInitMacro.self]
}
