// Apple platforms: the store in the app group container. A translation, no decisions
// (docs/client-sdk.md).
#if canImport(Darwin)
import BeckonClient
import Foundation

extension ClientStore {
    /// The store shared by the app and its extensions, in the app group's container, with
    /// suspension observed (`ClientStore.suspend()`). Opened under file coordination, as GRDB
    /// advises for a database several processes may create at once.
    public static func appGroup(
        _ identifier: String, fileName: String = "beckon-client.sqlite", clock: any ClientClock = SystemClock()
    ) throws -> ClientStore {
        guard let container = FileManager.default.containerURL(forSecurityApplicationGroupIdentifier: identifier) else {
            throw AppGroupError.noContainer(identifier)
        }
        let url = container.appendingPathComponent(fileName)
        var coordinationError: NSError?
        var result: Result<ClientStore, any Error> = .failure(AppGroupError.noContainer(identifier))
        NSFileCoordinator(filePresenter: nil).coordinate(writingItemAt: url, options: .forMerging, error: &coordinationError) { url in
            result = Result { try ClientStore(path: url.path, clock: clock, observesSuspension: true) }
        }
        if let coordinationError { throw coordinationError }
        return try result.get()
    }
}

public enum AppGroupError: Error, Hashable, Sendable {
    /// The app group is not in the target's entitlements.
    case noContainer(String)
}
#endif
