import ArgumentParser

/// `beckon bench …`: load generators, run in release builds (see BENCHMARKS.md).
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmarks (build with -c release).",
        subcommands: [BenchAPNSCommand.self, BenchServerCommand.self]
    )
}
