extension AppAPIKey {
    /// What an operator sees in listings and logs, never enough to authenticate: the start of the
    /// key's text (`SecretToken`'s format).
    public var prefix: String { "\(SecretToken.apiKeyPrefix)_\(id)" }
}
