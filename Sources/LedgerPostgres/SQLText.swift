import CLibPQ
import Logging
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Double-quotes an SQL identifier.
public func quoteIdentifier(_ name: String) -> String {
    "\"" + name.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
}

/// Single-quotes an SQL string literal.
public func quoteLiteral(_ value: String) -> String {
    "'" + value.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "''") + "'"
}

func withCStringArray<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let duplicated = strings.map { strdup($0) }
    defer { duplicated.forEach { free($0) } }
    let array = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: strings.count + 1)
    defer { array.deallocate() }
    for (i, p) in duplicated.enumerated() { array[i] = UnsafePointer(p) }
    array[strings.count] = nil
    return body(array)
}
