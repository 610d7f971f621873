import BeckonClient
import BeckonProtocol

/// CallKit as a log. It answers every report at once with `refusal` (nil: the call shows),
/// unless `answersAtOnce` is off; then `answerPending()` answers what waits.
package final class FakeCallReporter: CallReporterPort, @unchecked Sendable {
    private let lock = NSLockBox()
    package init() {}
    private var _reports: [CallIdentity] = []
    private var _ends: [(CallIdentity, CallEndOutcome)] = []
    private var _refusal: CallRefusal?
    private var _answersAtOnce = true
    private var pending: [@Sendable (CallRefusal?) -> Void] = []

    /// The calls reported, in order.
    package var reports: [CallIdentity] { lock.run { _reports } }
    package var ends: [(call: CallIdentity, outcome: CallEndOutcome)] { lock.run { _ends.map { (call: $0.0, outcome: $0.1) } } }
    package var refusal: CallRefusal? {
        get { lock.run { _refusal } }
        set { lock.run { _refusal = newValue } }
    }
    package var answersAtOnce: Bool {
        get { lock.run { _answersAtOnce } }
        set { lock.run { _answersAtOnce = newValue } }
    }

    package func reportIncomingCall(
        _ call: CallIdentity, display: CallDisplay, completion: @escaping @Sendable (CallRefusal?) -> Void
    ) {
        let answer = lock.run { () -> CallRefusal?? in
            _reports.append(call)
            guard _answersAtOnce else {
                pending.append(completion)
                return nil
            }
            return .some(_refusal)
        }
        if let answer { completion(answer) }
    }

    /// CallKit answers the reports it kept, with `refusal`.
    package func answerPending() {
        let (waiting, refusal) = lock.run {
            defer { pending.removeAll() }
            return (pending, _refusal)
        }
        for completion in waiting { completion(refusal) }
    }

    package func endCall(_ call: CallIdentity, outcome: CallEndOutcome) { lock.run { _ends.append((call, outcome)) } }
}

import Foundation

package final class NSLockBox: @unchecked Sendable {
    private let lock = NSLock()
    package init() {}
    package func run<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
