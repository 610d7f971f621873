import Foundation

struct TimedOut: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Waits (real time, polling) until `condition` holds: for work that runs on other tasks.
/// Generous by default; never a timing assertion, only a bound on a hang.
func eventually(
    _ what: String = "a condition", timeout: Duration = .seconds(10), _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(2))
    }
    throw TimedOut(what: what)
}
