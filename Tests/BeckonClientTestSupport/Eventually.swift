import Foundation

package struct TimedOut: Error, CustomStringConvertible {
    package let what: String
    package init(what: String) { self.what = what }
    package var description: String { "timed out waiting for \(what)" }
}

/// Waits (real time, polling) until `condition` holds: for work that runs on other tasks.
/// Generous by default; never a timing assertion, only a bound on a hang.
package func eventually(
    _ what: String = "a condition", timeout: Duration = .seconds(30), _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(2))
    }
    throw TimedOut(what: what)
}

import BeckonClient

extension ManualClock {
    /// Moves time on in `step`s until `condition` holds: a timer task registers its sleep a
    /// moment after the state that scheduled it, so one advance could come too early.
    package func advance(by step: Duration, until what: String, _ condition: () async throws -> Bool) async throws {
        // Generous: on a loaded machine the tasks that react to each step may wait a while for a
        // thread; only a hang should fail.
        try await eventually(what, timeout: .seconds(60)) {
            if try await condition() { return true }
            advance(by: step)
            return false
        }
    }
}
