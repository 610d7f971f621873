// iOS only: `os_proc_available_memory` (iOS 13+). A translation, no decisions (docs/client-sdk.md).
#if canImport(os) && (os(iOS) || BECKON_APPLE_SDK_STANDIN)
import BeckonClient
import os

/// `MemoryGaugePort` over `os_proc_available_memory`: what the extension may still allocate
/// before iOS kills it (about 24 MB in all, apns.md E.4).
public struct ProcessMemoryGauge: MemoryGaugePort {
    public init() {}

    /// Apple returns 0 both for "not an app" and for "already over the limit" (apns.md E.9);
    /// the SDK reads 0 as unknown, so past the limit it relies on its own per-answer cap.
    public func availableBytes() -> Int? {
        let available = os_proc_available_memory()
        return available > 0 ? Int(available) : nil
    }
}
#endif
