// Apple platforms: the store in the app group container. A translation, no decisions
// (docs/client-sdk.md).
#if canImport(Darwin) || BECKON_APPLE_SDK_STANDIN
import BeckonClient
import Foundation

extension ClientStore {
    /// The store shared by the app and its extensions, in a `Beckon` directory of the app
    /// group's container, with suspension observed (`ClientStore.suspend()`). It opens at its
    /// first use, not here: before the first unlock after a restart the file cannot be read
    /// (apns.md E.9), and a launch then (a VoIP push) must not fail. Throws only when the app
    /// group is missing from the entitlements.
    ///
    /// The directory, and so every file SQLite makes in it (the WAL and shared-memory files too),
    /// is "complete until first user authentication": readable while the phone is locked, from
    /// the first unlock on, whatever the app's default class is (apns.md E.9). The open runs under
    /// file coordination, as GRDB advises for a database several processes may create at once.
    public static func appGroup(
        _ identifier: String, fileName: String = "beckon-client.sqlite", clock: any ClientClock = SystemClock()
    ) throws -> ClientStore {
        guard let container = FileManager.default.containerURL(forSecurityApplicationGroupIdentifier: identifier) else {
            throw AppGroupError.noContainer(identifier)
        }
        let directory = container.appendingPathComponent("Beckon", isDirectory: true)
        return .deferred(
            path: directory.appendingPathComponent(fileName).path, clock: clock, observesSuspension: true,
            around: { path, open in
                let protection: [FileAttributeKey: Any] = [.protectionKey: FileProtectionType.completeUntilFirstUserAuthentication]
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: protection)
                try FileManager.default.setAttributes(protection, ofItemAtPath: directory.path)
                var failure: (any Error)?
                var coordinationError: NSError?
                NSFileCoordinator(filePresenter: nil).coordinate(
                    writingItemAt: URL(fileURLWithPath: path), options: .forMerging, error: &coordinationError
                ) { _ in
                    do { try open() } catch { failure = error }
                }
                if let error = coordinationError ?? failure { throw error }
            })
    }
}

/// The App Group is missing from the target's entitlements.
public enum AppGroupError: Error, Hashable, Sendable {
    /// The app group is not in the target's entitlements.
    case noContainer(String)
}
#endif
