/// A key just created: the only time its secret text exists outside the backend.
public struct IssuedAPIKey: Sendable {
    public var key: AppAPIKey
    /// The full key to hand to the backend (`bk_<id>_<secret>`).
    public var secret: String
}
