import BeckonStore
import Foundation
import NIOConcurrencyHelpers
import Testing

/// Stops a node's planner right after it asked where a device's sessions are, answer in hand,
/// until the test lets it go: what the test runs meanwhile (a claim, another node's planning)
/// lands between the question and the save that acts on its answer, the order a race would
/// seldom produce.
final class PresenceGate: Sendable {
    enum Question: String, Sendable {
        /// `DevicePresence.connectedElsewhere`: before a session's end is planned as a drop.
        case connectedElsewhere
        /// `DevicePresence.mayBeConnected`: before a planner saved as connected is told of a drop.
        case mayBeConnected
    }

    /// One question held, once.
    final class Hold: Sendable {
        private let asked = AsyncStream.makeStream(of: Void.self)
        private let answered = AsyncStream.makeStream(of: Void.self)

        /// Returns once the node has asked (and been answered). A question never asked fails the
        /// test instead of hanging it (a guard, not a measure: nothing here takes a minute).
        func reached(sourceLocation: SourceLocation = #_sourceLocation) async {
            let asked = await withTaskGroup(of: Bool.self) { group in
                group.addTask { [stream = self.asked.stream] in
                    for await _ in stream { return true }
                    return false
                }
                group.addTask {
                    try? await Task.sleep(for: .seconds(60))
                    return false
                }
                defer { group.cancelAll() }
                return await group.next() ?? false
            }
            if !asked { Issue.record("the held question was never asked", sourceLocation: sourceLocation) }
        }

        /// Lets the node go on with its answer.
        func release() {
            answered.continuation.yield()
            answered.continuation.finish()
        }

        fileprivate func hold() async {
            asked.continuation.yield()
            asked.continuation.finish()
            for await _ in answered.stream { return }
        }
    }

    private let holds = NIOLockedValueBox([String: Hold]())

    /// Holds `node`'s next `question` about `device`.
    func hold(_ question: Question, of device: DeviceRef, on node: String) -> Hold {
        let hold = Hold()
        holds.withLockedValue { $0[Self.key(question, device, node)] = hold }
        return hold
    }

    /// Called by the node with its answer taken: waits there if the test holds this question.
    func pass(_ question: Question, of device: DeviceRef, on node: String) async {
        let hold = holds.withLockedValue { $0.removeValue(forKey: Self.key(question, device, node)) }
        await hold?.hold()
    }

    private static func key(_ question: Question, _ device: DeviceRef, _ node: String) -> String {
        "\(node)/\(question.rawValue)/\(device.appID)/\(device.deviceID)"
    }
}
