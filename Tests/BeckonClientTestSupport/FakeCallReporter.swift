import BeckonClient
import BeckonProtocol

/// CallKit as a log.
public final class FakeCallReporter: CallReporterPort, @unchecked Sendable {
    private let lock = NSLockBox()
    public init() {}
    private var _reports: [CallReport] = []
    private var _ends: [(CallIdentity, CallEndOutcome)] = []

    public var reports: [CallReport] { lock.run { _reports } }
    public var ends: [(call: CallIdentity, outcome: CallEndOutcome)] { lock.run { _ends.map { (call: $0.0, outcome: $0.1) } } }

    public func report(_ report: CallReport) { lock.run { _reports.append(report) } }
    public func endCall(_ call: CallIdentity, outcome: CallEndOutcome) { lock.run { _ends.append((call, outcome)) } }
}

import Foundation

public final class NSLockBox: @unchecked Sendable {
    private let lock = NSLock()
    public init() {}
    public func run<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
