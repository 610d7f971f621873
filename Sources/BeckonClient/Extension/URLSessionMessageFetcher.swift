import BeckonJSON
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `MessageFetcherPort` over `URLSession`, on Apple platforms and on Linux alike (Foundation's
/// networking), so the extension's fetch path is tested against the real server.
public struct URLSessionMessageFetcher: MessageFetcherPort {
    /// `http(s)://host[:port]`: the server's HTTP API.
    public var baseURL: URL
    /// Read at each fetch: the keychain may be unreadable before the first unlock (apns.md E.9),
    /// and an extension process outlives that.
    public var credentials: any CredentialSource
    /// Per request; the extension's own deadline is shorter when it matters.
    public var timeout: TimeInterval

    public init(baseURL: URL, credentials: any CredentialSource, timeout: TimeInterval = 20) {
        self.baseURL = baseURL
        self.credentials = credentials
        self.timeout = timeout
    }

    public init(baseURL: URL, credential: String, timeout: TimeInterval = 20) {
        self.init(baseURL: baseURL, credentials: FixedCredential(credential), timeout: timeout)
    }

    public func fetch(messageID: String, byteLimit: Int) async throws(MessageFetchError) -> FetchedMessage {
        let url = baseURL.appendingPathComponent("v1").appendingPathComponent("messages").appendingPathComponent(messageID)
        guard let credential = try? credentials.credential() else { throw .unauthorized }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.setValue("Bearer \(credential)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        let (status, body) = try await BoundedDownload(limit: byteLimit).run(request)
        switch status {
        case 200:
            guard let json = try? JSONParser.parse(body) else { throw .malformed }
            return try FetchedMessage(json: json)
        case 404: throw .notFound
        case 401, 403: throw .unauthorized
        default: throw .status(status)
        }
    }
}
