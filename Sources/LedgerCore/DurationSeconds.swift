extension Duration {
    /// The duration in seconds, as a floating-point number (for rates and reports).
    public var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }

    /// The duration in whole microseconds (log time is kept in microseconds).
    public var microseconds: Int64 { components.seconds * 1_000_000 + components.attoseconds / 1_000_000_000_000 }
}
