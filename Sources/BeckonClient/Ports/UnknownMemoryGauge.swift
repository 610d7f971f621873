/// No gauge: only the configured budget limits what is loaded.
public struct UnknownMemoryGauge: MemoryGaugePort {
    public init() {}
    public func availableBytes() -> Int? { nil }
}
