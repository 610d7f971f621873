import BeckonClient
import BeckonProtocol

/// CallKit as a log.
final class FakeCallReporter: CallReporterPort, @unchecked Sendable {
    private let lock = NSLockBox()
    private var _reports: [CallReport] = []
    private var _ends: [(CallIdentity, CallEndOutcome)] = []

    var reports: [CallReport] { lock.run { _reports } }
    var ends: [(call: CallIdentity, outcome: CallEndOutcome)] { lock.run { _ends.map { (call: $0.0, outcome: $0.1) } } }

    func report(_ report: CallReport) { lock.run { _reports.append(report) } }
    func endCall(_ call: CallIdentity, outcome: CallEndOutcome) { lock.run { _ends.append((call, outcome)) } }
}

import Foundation

final class NSLockBox: @unchecked Sendable {
    private let lock = NSLock()
    func run<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
