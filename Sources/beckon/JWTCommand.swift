import APNS
import ArgumentParser
import Foundation

/// `beckon jwt`: prints a provider token, for curl and h2load.
struct JWTCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jwt",
        abstract: "Print an APNs provider token (ES256 JWT) for a .p8 key.",
        discussion: "Apple: reuse a token for 20 to 60 minutes; minting one per request gets TooManyProviderTokenUpdates."
    )

    @Option(name: .customLong("team-id")) var teamID: String
    @Option(name: .customLong("key-id")) var keyID: String
    @Option(name: .customLong("key-file")) var keyFile: String

    func run() throws {
        let key = try APNSSigningKey(teamID: teamID, keyID: keyID, pemFile: keyFile)
        print(try key.providerToken(issuedAt: Date()))
    }
}
