/// What the planner decided in one step, saved in one transaction.
public struct DeliveryBatch: Sendable {
    public var states: [DeliveryState] = []
    public var pushes: [OutboxPush] = []
    public var wakes: [WakeOutcome] = []

    public init(states: [DeliveryState] = [], pushes: [OutboxPush] = [], wakes: [WakeOutcome] = []) {
        self.states = states
        self.pushes = pushes
        self.wakes = wakes
    }

    public var isEmpty: Bool { states.isEmpty && pushes.isEmpty && wakes.isEmpty }
}
