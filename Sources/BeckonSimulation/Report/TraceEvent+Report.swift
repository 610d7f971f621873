import BeckonDelivery
import BeckonJSON

extension TraceEvent {
    /// The event as the report lists it: its type and the fields that say what it was. No time:
    /// the server's and the phone's clocks differ in a simulation (docs/simulator.md, "Traces"),
    /// so the trace's own order is what the report keeps.
    var reportJSON: JSONValue {
        var object: [String: JSONValue] = ["type": .string(type.rawValue)]
        if let sequence { object["sequence"] = .int(Int(sequence)) }
        if let reason { object["reason"] = .string(reason) }
        if let pushType { object["pushType"] = .string(pushType) }
        if let priority { object["priority"] = .int(priority) }
        if let apnsId { object["apnsId"] = .string(apnsId) }
        if let attempt { object["attempt"] = .int(attempt) }
        if let outcome { object["outcome"] = .string(outcome) }
        if let status { object["status"] = .int(status) }
        if let deviceId { object["deviceId"] = .string(deviceId) }
        return .object(object)
    }
}
