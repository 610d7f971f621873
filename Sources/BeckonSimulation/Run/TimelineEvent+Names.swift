import DeviceSimulator
import Foundation

extension TimelineEvent {
    /// The event with message and call ids replaced by the scenario's names (`m1`), so the
    /// report and the timeline read like the script.
    func renamed(_ names: [String: String]) -> TimelineEvent {
        guard !names.isEmpty else { return self }
        func name(_ id: String) -> String { names[id] ?? id }
        var event = self
        switch what {
        case .messagePosted(let id): event.what = .messagePosted(id: name(id))
        case .messageStored(let id): event.what = .messageStored(id: name(id))
        case .notificationShown(let identifier, let messages, let text):
            event.what = .notificationShown(identifier: name(identifier), messages: messages.map(name), text: text)
        case .notificationRemoved(let identifier, let why):
            event.what = .notificationRemoved(identifier: name(identifier), why: why)
        case .callReported(let call): event.what = .callReported(callID: name(call))
        case .callEnded(let call, let outcome): event.what = .callEnded(callID: name(call), outcome: outcome)
        case .note(let text), .violation(_, let text), .user(let text):
            var renamed = text
            for (id, label) in names { renamed = renamed.replacingOccurrences(of: id, with: label) }
            switch what {
            case .violation(let kind, _): event.what = .violation(kind, detail: renamed)
            case .user: event.what = .user(renamed)
            default: event.what = .note(renamed)
            }
        default: break
        }
        return event
    }
}
