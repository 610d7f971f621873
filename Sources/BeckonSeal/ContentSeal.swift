import BeckonJSON
import Crypto
import BeckonProtocol
import Foundation

/// Seals alert content for one device with AES-256-GCM, and opens it again (the client SDK's
/// extension does the opening; tests use it too).
///
/// Format: standard base64 of `nonce (12) ‖ ciphertext ‖ tag (16)` (CryptoKit's `combined`), the
/// plaintext being `SealedContent` as JSON with sorted keys, authenticated with the associated
/// data `"beckon-content-v1"` so a sealed blob from any other use of the key does not open as
/// content. The nonce is random: it is the one source of randomness in the planner besides push
/// ids, deliberately — a nonce derived from state could repeat after a restore, and a repeated
/// GCM nonce under one key leaks the plaintexts.
public enum ContentSeal {
    public static let keyByteCount = 32
    static let associatedData = Data("beckon-content-v1".utf8)

    public static func seal(_ content: SealedContent, key: Data) throws(ContentSealError) -> String {
        let symmetricKey = try symmetricKey(key)
        guard let plaintext = try? JSONStreamEncoder(options: .sortedKeys).encode(content),
            let box = try? AES.GCM.seal(plaintext, using: symmetricKey, authenticating: associatedData),
            let combined = box.combined
        else { throw .malformed }
        return combined.base64EncodedString()
    }

    public static func open(_ sealed: String, key: Data) throws(ContentSealError) -> SealedContent {
        let symmetricKey = try symmetricKey(key)
        guard let combined = Data(base64Encoded: sealed), let box = try? AES.GCM.SealedBox(combined: combined) else {
            throw .malformed
        }
        guard let plaintext = try? AES.GCM.open(box, using: symmetricKey, authenticating: associatedData) else {
            throw .authenticationFailed
        }
        guard let content = try? JSONValueDecoder().decode(SealedContent.self, from: plaintext) else {
            throw .undecodable
        }
        return content
    }

    private static func symmetricKey(_ key: Data) throws(ContentSealError) -> SymmetricKey {
        guard key.count == keyByteCount else { throw .badKey(bytes: key.count) }
        return SymmetricKey(data: key)
    }
}
