import BeckonProtocol

/// A device's live sessions, one per role. A struct of two slots rather than a dictionary: the
/// hub keeps one per connected device, and an idle session's memory is the figure that counts
/// (BENCHMARKS.md).
struct DeviceSessions {
    private var app: SyncSessionHandle?
    private var appExtension: SyncSessionHandle?

    subscript(role: SyncRole) -> SyncSessionHandle? {
        get { role == .app ? app : appExtension }
        set { if role == .app { app = newValue } else { appExtension = newValue } }
    }

    var all: [SyncSessionHandle] { [app, appExtension].compactMap { $0 } }
    var count: Int { (app == nil ? 0 : 1) + (appExtension == nil ? 0 : 1) }
    var isEmpty: Bool { app == nil && appExtension == nil }
}
