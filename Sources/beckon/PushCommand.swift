import ArgumentParser

struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "push")
    func run() async throws {}
}
