import ArgumentParser
import BeckonJSON
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `beckon try`: the second of a newcomer's two commands. Against a `beckon serve` running the
/// development app, it does what an app and its backend do — register a device with a user
/// token, post a message with the API key — and shows the push the built-in emulator received
/// for the device, which is offline, so Beckon wakes it (docs/design.md, rule 3).
struct TryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "try",
        abstract: "Register a device, post it a message, and show the push (the development app).",
        discussion: "Start `beckon serve` with no app configured first; it writes the credentials file this reads."
    )

    @Option(help: "The development app's credentials file.")
    var credentials: String = DevelopmentApp.credentialsPath(database: "beckon.sqlite")
    @Option(help: "The user to register a device for and post to.") var user: String = "newcomer"
    @Option(help: "The message's text.") var text: String = "Hello from Beckon"

    func run() async throws {
        let app = try DevelopmentApp.load(credentials)
        guard let apiKey = app.apiKey else { throw ValidationError("\(credentials) holds no API key yet: is beckon serve running?") }
        let token = DevelopmentApp.randomSecret()  // 32 random bytes in hex: an APNs device token
        let userToken = UserToken.sign(
            app: DevelopmentApp.id, user: user, secret: app.userTokenSecret, expires: Date().addingTimeInterval(600))

        let device = try await Self.call("POST", app.url + "/v1/devices", bearer: userToken, body: [
            "deviceId": .string("try-\(token.prefix(8))"), "bundleId": .string(DevelopmentApp.bundleID), "environment": "sandbox",
            "tokens": ["remote": .string(token)], "capabilities": ["backgroundModes": ["remote-notification"]],
        ])
        let deviceID = device["device"]?["deviceId"]?.stringValue ?? "?"
        print("1. POST /v1/devices with a user token for \"\(user)\": device \(deviceID) registered")
        let message = try await Self.call("POST", app.url + "/v1/messages", bearer: apiKey, body: [
            "recipients": ["users": [.string(user)]], "kind": "message", "payload": ["text": .string(text)],
            "notification": ["title": "Beckon", "body": .string(text)],
        ])
        let id = message["id"]?.stringValue ?? "?"
        print("2. POST /v1/messages with the API key: message \(id) accepted")
        print("3. The device is not connected, so Beckon pushes it. The emulator received:")
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let received = try await Self.received(control: app.emulatorControl, token: token)
            if let push = received.first {
                print(String(decoding: push.prettyBytes.dropLast(), as: UTF8.self))
                print("Connect the device with its credential over the sync protocol (docs/sync-protocol.md) to get the message itself.")
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ValidationError("no push reached the emulator in 10 s (see the server's log)")
    }

    static func received(control: String, token: String) async throws -> [JSONValue] {
        let (data, response) = try await URLSession.shared.data(from: URL(string: "\(control)/devices/\(token)/received")!)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { return [] }
        return (try JSONParser.parse(data))["notifications"]?.arrayValue ?? []
    }

    static func call(_ method: String, _ url: String, bearer: String, body: JSONValue) async throws -> JSONValue {
        let (status, data) = try await HTTPCall.json(method, url, bearer: bearer, body: body)
        guard (200..<300).contains(status), let answer = try? JSONParser.parse(data), answer.objectValue != nil else {
            throw ValidationError("\(method) \(url): \(status) \(String(decoding: data, as: UTF8.self))")
        }
        return answer
    }
}
