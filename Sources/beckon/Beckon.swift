import ArgumentParser

@main
struct Beckon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beckon",
        abstract: "Push and sync for iOS apps: the server, an APNs client, and an APNs emulator.",
        subcommands: [
            ServeCommand.self, TryCommand.self, UserTokenCommand.self, AdminCommand.self, TraceCommand.self, PushCommand.self, JWTCommand.self, APNSEmulatorCommand.self, BenchCommand.self, SimulateCommand.self,
        ]
    )
}
