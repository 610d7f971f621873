import Foundation

/// What the delivery report and the status page count: pushes and their outcomes, devices,
/// unreachable ones. Reads only.
public protocol DeliveryReports: Sendable {
    /// Counts and latencies of the app's pushes since `date`, for the delivery report.
    func pushRecords(appID: String, since date: Date) async throws -> [PushRecord]
    /// The app's devices, those without a token left, and its pushes waiting in the outbox.
    func appCounts(appID: String) async throws -> AppCounts
    /// How many of the app's devices are unreachable now (rule 4).
    func unreachableDeviceCount(appID: String) async throws -> Int
    /// Of the app's messages (kinds that notify) created in `from..<to`, how many a device
    /// reported shown within `within` seconds of their creation, by strategy (docs/trace.md).
    func shownShares(appID: String, from: Date, to: Date, within: TimeInterval) async throws -> [ShownShare]
}
