/// How much memory the process may still use (`os_proc_available_memory` on iOS). A
/// notification service extension is killed at about 24 MB (apns.md E.4), so it checks before
/// loading anything big.
public protocol MemoryGaugePort: Sendable {
    /// Bytes left before the system kills the process; nil when unknown (then the budget alone
    /// decides).
    func availableBytes() -> Int?
}
