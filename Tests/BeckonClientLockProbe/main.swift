// A second process for the cross-process lease tests (Tests/BeckonClientTests/Lease/
// CrossProcessLeaseTests.swift): it takes the lease in a shared SQLite file as the app or an
// extension would, writes while it holds it, and says what happens on stdout, one line per
// event, so a test can preempt it, kill it with SIGKILL, or freeze it with SIGSTOP.
//
//   BeckonClientLockProbe DB ROLE hold [MILLISECONDS]   take, write every 20 ms, release after
//                                                       MILLISECONDS (default: until revoked)
//   BeckonClientLockProbe DB ROLE take                  take, report, release
//
// Lines: "acquired generation=G dirty=D", "revoked preempted|lost", "write refused",
// "commit accepted|refused", "released", "timed out".
import BeckonClient
import BeckonProtocol
import Foundation

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = CommandLine.arguments
guard arguments.count >= 4, let role = SyncRole(rawValue: arguments[2]) else {
    FileHandle.standardError.write(Data("usage: BeckonClientLockProbe DB app|extension hold [ms] | take\n".utf8))
    exit(64)
}
let clock = SystemClock()
let store = try ClientStore(path: arguments[1], clock: clock)
// A generous yield timeout, so the commit after a preemption is never cut short on a loaded
// test machine (the default is 300 ms).
var timing = LeaseLock.Timing()
timing.yieldTimeout = .seconds(2)
let lock = LeaseLock(store: store, holder: LeaseHolder(role: role), clock: clock, timing: timing)

let writer: LeaseGuard
do {
    writer = try await lock.acquire(timeout: .seconds(10))
} catch {
    say("timed out")
    exit(1)
}
say("acquired generation=\(writer.generation) dirty=\(writer.isDirty)")

switch arguments[3] {
case "take":
    await writer.release()
    say("released")

case "hold":
    let holdFor = arguments.count > 4 ? Int(arguments[4]).map { Duration.milliseconds($0) } : nil
    let revoked = AsyncStream<LeaseLock.Revocation>.makeStream()
    await lock.onRevocation { reason in revoked.continuation.yield(reason) }
    // Write while holding, as a syncing extension does; stop at the first refusal.
    let writing = Task {
        var count = 0
        while !Task.isCancelled {
            count += 1
            do {
                try store.setBadge(count, as: writer)
            } catch {
                say("write refused")
                return
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
    let outcome = await withTaskGroup(of: String.self) { group in
        group.addTask {
            for await reason in revoked.stream { return "revoked \(reason)" }
            return "revoked"
        }
        if let holdFor {
            group.addTask {
                try? await Task.sleep(for: holdFor)
                return "done"
            }
        }
        let first = await group.next() ?? "done"
        group.cancelAll()
        return first
    }
    if outcome.hasPrefix("revoked") { say(outcome) }
    writing.cancel()
    await writing.value
    // The last commit before letting go: accepted while the row still names this process
    // (preempted: it yields after committing), refused once it names another (lost).
    do {
        try store.setBadge(-1, as: writer)
        say("commit accepted")
    } catch {
        say("commit refused")
    }
    await writer.release()
    say("released")

default:
    say("unknown command")
    exit(64)
}
exit(0)
