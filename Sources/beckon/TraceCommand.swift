import ArgumentParser
import BeckonJSON
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `beckon trace ID`: what happened to a message, device by device (docs/trace.md).
struct TraceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace",
        abstract: "Show what happened to a message: stored, pushed, APNs' answers, the device's receipts.",
        discussion: "Reads GET /v1/messages/{id}/trace with an app API key: --api-key, else BECKON_API_KEY, else the development app's credentials file."
    )

    @Argument(help: "The message id (from POST /v1/messages).") var messageID: String
    @Option(help: "The server's base URL.") var url: String = "http://127.0.0.1:8080"
    @Option(help: "The app's API key (bk_…).") var apiKey: String?
    @Option(help: "The development app's credentials file, read when no key is given.")
    var credentials: String = DevelopmentApp.credentialsPath(database: "beckon.sqlite")
    @Flag(help: "Print the server's JSON answer instead of the timeline.") var json = false

    func run() async throws {
        let (status, data) = try await HTTPCall.json("GET", url + "/v1/messages/\(HTTPCall.segment(messageID))/trace", bearer: try key())
        guard status == 200, let trace = try? JSONParser.parse(data) else {
            throw ValidationError("GET /v1/messages/\(messageID)/trace: \(status) \(String(decoding: data, as: UTF8.self))")
        }
        print(json ? HTTPCall.pretty(data) : Self.timeline(trace))
    }

    func key() throws -> String {
        if let apiKey { return apiKey }
        if let key = ProcessInfo.processInfo.environment["BECKON_API_KEY"], !key.isEmpty { return key }
        if FileManager.default.fileExists(atPath: credentials), let key = try DevelopmentApp.load(credentials).apiKey { return key }
        throw ValidationError("no API key: pass --api-key or set BECKON_API_KEY")
    }

    /// One block per device, one line per event: its time, its type, what it says.
    static func timeline(_ trace: JSONValue) -> String {
        var lines = ["message \(trace["messageId"]?.stringValue ?? "?") (\(trace["kind"]?.stringValue ?? "?")), created \(trace["createdAt"]?.stringValue ?? "?")"]
        for recipient in trace["recipients"]?.arrayValue ?? [] {
            lines.append("  for \(recipient["userId"]?.stringValue ?? "?") at sequence \(recipient["sequence"]?.intValue ?? 0)")
        }
        for device in trace["devices"]?.arrayValue ?? [] {
            let user = device["userId"]?.stringValue.map { " (\($0))" } ?? " (deleted)"
            lines.append("device \(device["deviceId"]?.stringValue ?? "?")\(user)")
            for event in device["events"]?.arrayValue ?? [] {
                lines.append("  \(event["at"]?.stringValue ?? "?")  \((event["type"]?.stringValue ?? "?").padding(toLength: 14, withPad: " ", startingAt: 0))\(details(event))")
            }
        }
        return lines.joined(separator: "\n")
    }

    private static func details(_ event: JSONValue) -> String {
        guard case .object(let fields) = event else { return "" }
        return fields.keys.sorted().filter { $0 != "at" && $0 != "type" }.map { key in
            let value = fields[key]!
            return "\(key)=\(value.stringValue ?? String(decoding: value.bytes, as: UTF8.self))"
        }.joined(separator: " ")
    }
}
