import APNSCore
import APNSEmulator
import Foundation
import TestCapture

/// Starts an emulator that knows `key` (and `extraKeys`), runs the body, shuts it down.
///
/// Defaults: sandbox, one event loop thread, device tokens registered on first use, and the
/// bundle ids `com.example.app` and `com.example.other` (pass `[]` to allow any topic).
public func withEmulator<Result>(
    key: TestKey = TestKey(),
    extraKeys: [APNSEmulatorAuthKey] = [],
    bundleIDs: [String] = ["com.example.app", "com.example.other"],
    clock: TestClock? = nil,
    configure: (inout APNSEmulatorConfiguration) -> Void = { _ in },
    _ body: (APNSEmulator, TestKey) async throws -> Result
) async throws -> Result {
    TestLogCapture.install()
    var configuration = APNSEmulatorConfiguration(
        authKeys: [key.authKey()] + extraKeys,
        bundleIDs: bundleIDs,
        environment: .sandbox,
        autoRegister: true
    )
    configuration.threads = 1
    if let clock { configuration.now = clock.function }
    configure(&configuration)
    let emulator = try APNSEmulator(configuration: configuration)
    try await emulator.start()
    do {
        let result = try await body(emulator, key)
        try await emulator.shutdown()
        return result
    } catch {
        try? await emulator.shutdown()
        throw error
    }
}
