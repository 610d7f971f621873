/// A user, addressed within its app: user ids are the backend's and are unique only per app.
public struct UserRef: Hashable, Sendable, Codable, CustomStringConvertible {
    public var appID: String
    public var userID: String

    public init(appID: String, userID: String) {
        self.appID = appID
        self.userID = userID
    }

    public var description: String { "\(appID)/\(userID)" }
}
