import Crypto
import Foundation

/// Signs a webhook's body as Standard Webhooks does (docs/webhooks.md, "Verifying"): HMAC-SHA256
/// over `"<webhook-id>.<webhook-timestamp>.<body>"`, sent as `webhook-signature: v1,<base64>`.
/// The timestamp is signed so that a captured request cannot be replayed later: receivers refuse
/// one older than a few minutes.
public struct WebhookSigner: Sendable {
    /// The key's bytes (`SymmetricKey` is not `Sendable`).
    private let key: [UInt8]

    /// `whsec_<base64>` is the key's bytes in base64 (Standard Webhooks' form); any other text is
    /// used as its UTF-8 bytes.
    public init(secret: String) {
        if secret.hasPrefix("whsec_"), let bytes = Data(base64Encoded: String(secret.dropFirst(6))), !bytes.isEmpty {
            key = Array(bytes)
        } else {
            key = Array(secret.utf8)
        }
    }

    /// The `webhook-signature` header's value.
    public func signature(id: String, timestamp: Int, body: some Collection<UInt8>) -> String {
        var signed = Array("\(id).\(timestamp).".utf8)
        signed.append(contentsOf: body)
        let mac = HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: key))
        return "v1," + Data(mac).base64EncodedString()
    }

    /// Whether `header` (space-separated `v1,<base64>` entries, as when a secret is rotated) holds
    /// this body's signature; what a receiver checks, beside the timestamp's age.
    public func verify(id: String, timestamp: Int, body: some Collection<UInt8>, header: String) -> Bool {
        let expected = Array(signature(id: id, timestamp: timestamp, body: body).utf8)
        return header.split(separator: " ").contains { candidate in
            let given = Array(candidate.utf8)
            // Compared in constant time: a receiver's check must not leak how much matched.
            return given.count == expected.count && zip(given, expected).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
        }
    }
}
