import Foundation

/// A backend's key for one app, as stored: an id that is also the key's visible prefix
/// (`prefix`), and the SHA-256 of the whole key. The secret itself is never stored.
public struct AppAPIKey: Hashable, Sendable, Codable {
    /// Random, unique, and part of the key text (`bk_<id>_<secret>`), so a presented key is found
    /// by index and only then compared by hash.
    public var id: String
    public var appID: String
    public var name: String?
    public var createdAt: Date
    public var revokedAt: Date?

    public init(id: String, appID: String, name: String?, createdAt: Date, revokedAt: Date? = nil) {
        self.id = id
        self.appID = appID
        self.name = name
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }
}
