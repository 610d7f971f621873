import ArgumentParser

struct JWTCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "jwt")
    func run() async throws {}
}
