/// Why sealed content could not be sealed or opened.
public enum ContentSealError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The key is not 32 bytes (AES-256).
    case badKey(bytes: Int)
    /// The text is not base64 of a nonce, ciphertext and tag.
    case malformed
    /// Wrong key, or the sealed text was altered: AES-GCM's tag did not verify.
    case authenticationFailed
    /// It opened, but the plaintext is not sealed content.
    case undecodable

    public var description: String {
        switch self {
        case .badKey(let bytes): "a content key is 32 bytes; got \(bytes)"
        case .malformed: "sealed content is not base64 of nonce, ciphertext and tag"
        case .authenticationFailed: "sealed content did not authenticate (wrong key, or altered)"
        case .undecodable: "sealed content opened but is not valid content JSON"
        }
    }
}
