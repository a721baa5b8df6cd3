extension UnsafeBufferPointer {
    /// `body` applied to the element at `i` where it lies, without copying it out.
    ///
    /// Passing `buffer[i]` to a function copies the element first (for a struct of strings,
    /// arrays and closures, a retain of each and a release after): the compiler cannot tell
    /// that the function leaves the buffer's memory alone. Borrowed from an `inout` it can.
    /// Nothing is written through the pointer.
    @inlinable @inline(__always)
    public func lend<T, E: Error>(_ i: Int, _ body: (Element) throws(E) -> T) throws(E) -> T {
        precondition(i >= 0 && i < count, "index \(i) out of 0..<\(count)")
        func borrow(_ element: inout Element) throws(E) -> T { try body(element) }
        return try borrow(&UnsafeMutablePointer(mutating: baseAddress! + i).pointee)
    }
}
