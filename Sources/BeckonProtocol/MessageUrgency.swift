/// How soon the user should learn of a message; the delivery planner maps it to a push kind and
/// priority. Stored as text so new levels need no migration.
public enum MessageUrgency: String, Hashable, Sendable, Codable, CaseIterable {
    /// Synced when the app next connects; no push on its own.
    case low
    /// The default: pushed according to the app's strategy.
    case normal
    /// Pushed at once with high priority.
    case high
}
