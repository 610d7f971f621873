/// Where the parts that see things happen (the API, the sync hub) report them to delivery. A
/// narrow port: the API needs to say "a message was appended", not to hold the planner.
public struct DeliveryEventSink: Sendable {
    private let body: @Sendable (DeliveryEvent) -> Void

    public init(_ body: @escaping @Sendable (DeliveryEvent) -> Void) {
        self.body = body
    }

    /// A sink that drops everything: a server without delivery (tests of the API alone).
    public static let none = DeliveryEventSink { _ in }

    public func submit(_ event: DeliveryEvent) { body(event) }
}
