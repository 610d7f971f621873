/// Where a message's trace and the run's own record disagree: the device, the message (its
/// scenario name where it has one) and what disagrees.
struct TraceFinding: Hashable, Sendable, CustomStringConvertible {
    var device: String
    var message: String
    var problem: String

    var description: String { "\(message) on \(device): \(problem)" }
}
