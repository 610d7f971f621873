import APNSCore
import ArgumentParser
import BeckonJSON
import Crypto
import Foundation

/// `beckon user-token`: signs a user token as an app's backend does (docs/design.md: an HS256
/// JWT whose `aud` is the app id and `sub` the user id), to register devices by hand.
struct UserTokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user-token",
        abstract: "Sign a user token (HS256 JWT) for POST /v1/devices.",
        discussion: "Prints the token. The secret is the app's apps.<id>.user-token-secret, or the development app's."
    )

    @Option(help: "The user id (the token's sub).") var user: String
    @Option(help: "The app id (the token's aud).") var app: String = DevelopmentApp.id
    @Option(help: "The app's user-token secret; without it, read from --credentials.") var secret: String?
    @Option(help: "The development app's credentials file (beckon serve with no app writes it).")
    var credentials: String = DevelopmentApp.credentialsPath(database: "beckon.sqlite")
    @Option(help: "Lifetime in seconds.") var lifetime: Int = 3600

    func run() throws {
        let key = try secret ?? DevelopmentApp.load(credentials).userTokenSecret
        print(UserToken.sign(app: app, user: user, secret: key, expires: Date().addingTimeInterval(TimeInterval(lifetime))))
    }
}

/// The user token an app's backend signs: `base64url(header).base64url(claims).base64url(HMAC-SHA256)`
/// (RFC 7519, RFC 7515 §3 compact form).
enum UserToken {
    static func sign(app: String, user: String, secret: String, expires: Date) -> String {
        func part(_ object: JSONValue) -> String { Base64URL.encode(Data(object.bytes)) }
        let claims: JSONValue = ["aud": .string(app), "sub": .string(user), "exp": .int(Int(expires.timeIntervalSince1970))]
        let signed = part(["alg": "HS256", "typ": "JWT"]) + "." + part(claims)
        let mac = HMAC<SHA256>.authenticationCode(for: Data(signed.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return signed + "." + Base64URL.encode(Data(mac))
    }
}

extension DevelopmentApp {
    static func load(_ path: String) throws -> DevelopmentApp {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("no \(path): start `beckon serve` with no app configured first, or pass --secret")
        }
        return try JSONValueDecoder().decode(DevelopmentApp.self, from: data)
    }
}
