import BeckonJSON
import APNS
import APNSCore
import ArgumentParser
import Foundation

/// `beckon push`: curl for APNs. One JSON line per notification; exit 0 only if all got 200.
struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Send a notification to one or more device tokens.",
        discussion: """
            Prints one JSON line per token: {"token","status","apns_id","reason","timestamp"}.
            Exits 0 only if every notification got 200, 1 if any was refused, 2 on a usage or connection error.
            """
    )

    @OptionGroup var connection: APNSConnectionOptions
    @OptionGroup var notification: NotificationOptions

    @Option(name: .customLong("token"), help: "A device token in hex (repeatable).")
    var tokens: [String] = []

    @Option(name: .customLong("tokens-file"), help: "A file with one hex device token a line.")
    var tokensFile: String?

    func validate() throws {
        if tokens.isEmpty && tokensFile == nil { throw ValidationError("give --token HEX or --tokens-file F") }
    }

    func run() async throws {
        var hexTokens = tokens
        if let tokensFile {
            let text = try String(contentsOfFile: tokensFile, encoding: .utf8)
            hexTokens += text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        // Check everything before sending anything.
        var requests: [(String, APNSRequest)] = []
        for hex in hexTokens {
            do {
                requests.append((hex, try notification.makeRequest(for: try APNSDeviceToken(hex: hex))))
            } catch let error as APNSDeviceTokenError {
                throw ValidationError("token \(hex.prefix(8))…: \(error)")
            } catch let error as APNSPayloadError {
                throw ValidationError("\(error)")
            }
        }

        let client = APNSClient(configuration: try connection.clientConfiguration())
        let credential = try connection.credential()
        let environment = connection.environment
        var allDelivered = true
        var failed = false
        var finished = 0
        await withTaskGroup(of: (Int, Result<APNSResponse, APNSClientError>).self) { group in
            // At most 1000 in flight: enough to fill the connections, bounded for huge token files.
            var next = 0
            while next < requests.count || !group.isEmpty {
                while next < requests.count && next < 1000 + finished {
                    let index = next
                    let request = requests[index].1
                    group.addTask {
                        do {
                            return (index, .success(try await client.send(request, environment: environment, credential: credential)))
                        } catch let error as APNSClientError {
                            return (index, .failure(error))
                        } catch {
                            return (index, .failure(.connectionFailed(attempts: 0, lastError: .connectionClosed)))
                        }
                    }
                    next += 1
                }
                guard let (index, result) = await group.next() else { break }
                finished += 1
                let hex = requests[index].0
                switch result {
                case .success(let response):
                    allDelivered = allDelivered && response.isSuccess
                    print(PushResultLine(token: hex, response: response).json)
                case .failure(let error):
                    failed = true
                    print(PushResultLine(token: hex, error: error).json)
                }
            }
        }
        await client.shutdown()
        if failed { throw ExitCode(2) }
        if !allDelivered { throw ExitCode(1) }
    }
}

/// One output line of `beckon push`: `{"apns_id","reason","status","timestamp","token"}`.
struct PushResultLine {
    var token: String
    var status: Int?
    var apnsID: String?
    var reason: String?
    /// For 410: when the token stopped being valid, in milliseconds since 1970 (as APNs sends it).
    var timestamp: Int?
    var error: String?

    init(token: String, response: APNSResponse) {
        self.token = token
        status = response.status
        apnsID = response.apnsID?.uuidString.lowercased()
        reason = response.reason?.rawValue
        timestamp = response.timestamp.map { Int(($0.timeIntervalSince1970 * 1000).rounded()) }
    }

    init(token: String, error: APNSClientError) {
        self.token = token
        self.error = error.description
    }

    /// One line per token; a field APNs did not send is `null`, an error only when there was one.
    var json: String {
        var fields: [String: JSONValue] = [
            "apns_id": apnsID.map(JSONValue.string) ?? .null,
            "reason": reason.map(JSONValue.string) ?? .null,
            "status": status.map(JSONValue.int) ?? .null,
            "timestamp": timestamp.map(JSONValue.int) ?? .null,
            "token": .string(token),
        ]
        if let error { fields["error"] = .string(error) }
        return String(decoding: JSONValue.object(fields).bytes, as: UTF8.self)
    }
}
