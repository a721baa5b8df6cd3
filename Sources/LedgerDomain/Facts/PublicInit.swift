/// A public memberwise initializer for a struct (LedgerMacros' `PublicInitMacro`): parameters in
/// the order the stored properties are declared, each defaulting to its property's initial value,
/// or to `nil` when optional. What lets a fact list its fields once.
@attached(member, names: named(init))
macro PublicInit() = #externalMacro(module: "LedgerMacros", type: "PublicInitMacro")
