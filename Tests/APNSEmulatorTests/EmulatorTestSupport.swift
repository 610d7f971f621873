import APNSCore
import Foundation

@testable import APNSEmulator

/// Starts an emulator, runs the body, shuts it down.
func withEmulator<Result>(
    key: TestKey = TestKey(),
    extraKeys: [APNSEmulatorAuthKey] = [],
    clock: TestClock? = nil,
    configure: (inout APNSEmulatorConfiguration) -> Void = { _ in },
    _ body: (APNSEmulator, TestKey) async throws -> Result
) async throws -> Result {
    var configuration = APNSEmulatorConfiguration(
        authKeys: [key.authKey()] + extraKeys,
        bundleIDs: ["com.example.app", "com.example.other"],
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
