import ArgumentParser
import BeckonJSON
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `beckon admin …`: the admin API (`/v1/admin/...`, the admin token) from a terminal.
struct AdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin",
        abstract: "Issue and revoke API keys, list a user's devices, show a delivery report.",
        discussion: "Prints the server's JSON answer. The admin token comes from --admin-token, else BECKON_ADMIN_TOKEN, else the development app's credentials file.",
        subcommands: [CreateKey.self, RevokeKey.self, Devices.self, Report.self]
    )

    struct Connection: ParsableArguments {
        @Option(help: "The server's base URL.") var url: String = "http://127.0.0.1:8080"
        @Option(help: "The admin token (admin.token).") var adminToken: String?
        @Option(help: "The development app's credentials file, read when no token is given.")
        var credentials: String = DevelopmentApp.credentialsPath(database: "beckon.sqlite")

        func token() throws -> String {
            if let adminToken { return adminToken }
            if let token = ProcessInfo.processInfo.environment["BECKON_ADMIN_TOKEN"], !token.isEmpty { return token }
            if FileManager.default.fileExists(atPath: credentials) { return try DevelopmentApp.load(credentials).adminToken }
            throw ValidationError("no admin token: pass --admin-token or set BECKON_ADMIN_TOKEN")
        }

        /// Calls the admin API and prints its answer; a non-2xx answer is an error.
        func call(_ method: String, _ path: String, body: JSONValue? = nil) async throws {
            let (status, data) = try await HTTPCall.json(method, url + path, bearer: try token(), body: body)
            let text = data.isEmpty ? "" : String(decoding: data, as: UTF8.self)
            guard (200..<300).contains(status) else { throw ValidationError("\(method) \(path): \(status) \(text)") }
            print(text.isEmpty ? "\(status)" : HTTPCall.pretty(data))
        }
    }

    struct CreateKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "create-key", abstract: "Issue an API key for an app's backend.")
        @OptionGroup var connection: Connection
        @Option(help: "The app id.") var app: String
        @Option(help: "A name to tell the key by.") var name: String?

        func run() async throws {
            try await connection.call("POST", "/v1/admin/apps/\(HTTPCall.segment(app))/keys", body: name.map { ["name": .string($0)] } ?? [:])
        }
    }

    struct RevokeKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "revoke-key", abstract: "Revoke an API key at once.")
        @OptionGroup var connection: Connection
        @Option(help: "The app id.") var app: String
        @Option(help: "The key's id (between bk_ and the second _).") var keyId: String

        func run() async throws {
            try await connection.call("DELETE", "/v1/admin/apps/\(HTTPCall.segment(app))/keys/\(HTTPCall.segment(keyId))")
        }
    }

    struct Devices: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "devices", abstract: "List a user's devices.")
        @OptionGroup var connection: Connection
        @Option(help: "The app id.") var app: String
        @Option(help: "The user id.") var user: String

        func run() async throws {
            try await connection.call("GET", "/v1/admin/apps/\(HTTPCall.segment(app))/users/\(HTTPCall.segment(user))/devices")
        }
    }

    struct Report: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "report", abstract: "Show an app's delivery report.")
        @OptionGroup var connection: Connection
        @Option(help: "The app id.") var app: String
        @Option(help: "The window, in seconds (1 to 2592000).") var sinceSeconds: Int = 86_400

        func run() async throws {
            try await connection.call("GET", "/v1/admin/apps/\(HTTPCall.segment(app))/delivery/report?sinceSeconds=\(sinceSeconds)")
        }
    }
}

/// JSON over HTTP for the CLI's client commands (`beckon try`, `beckon admin`).
enum HTTPCall {
    static func json(_ method: String, _ url: String, bearer: String, body: JSONValue? = nil) async throws -> (Int, Data) {
        guard let target = URL(string: url) else { throw ValidationError("not a URL: \(url)") }
        var request = URLRequest(url: target)
        request.httpMethod = method
        request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization")
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(body.bytes)
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }

    /// A path segment, percent-encoded (an id may hold `/` or spaces).
    static func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? text
    }

    static func pretty(_ data: Data) -> String {
        guard let value = try? JSONParser.parse(data) else { return String(decoding: data, as: UTF8.self) }
        return String(decoding: value.prettyBytes.dropLast(), as: UTF8.self)
    }
}
