/// Why the device could not be registered; the registrar tries again at the next token or call.
public enum RegistrationError: Error, Hashable, Sendable {
    /// The app's backend gave no user token, or the server refused it (401).
    case userTokenRefused
    /// The server answered something else: its status and `error.code`, if any.
    case refused(status: Int, code: String?)
    /// The request did not reach the server, or no answer came back.
    case transport(String)
    /// The keychain would not keep the credential (before the first unlock, apns.md E.9).
    case credentialNotSaved
    /// The keychain cannot be read yet (before the first unlock): nothing was sent, since
    /// registering again would make a second device of this install.
    case credentialUnavailable
}
