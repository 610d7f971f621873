import ArgumentParser

// Owned by the emulator work: `beckon apns-emulator`.
struct APNSEmulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "apns-emulator", abstract: "Run the APNs emulator.")
    func run() async throws {}
}
