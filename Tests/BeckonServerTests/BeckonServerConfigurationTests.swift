@testable import BeckonServer
import Configuration
import Testing

@Suite struct BeckonServerConfigurationTests {
    @Test func defaultsWhenNothingIsSet() throws {
        let configuration = try BeckonServerConfiguration(reading: ConfigReader(provider: InMemoryProvider(values: [:])))
        #expect(configuration == .defaults)
    }

    @Test func earlierProvidersWin() throws {
        // The order `beckon serve` uses: flags, then environment, then the file.
        let flags = InMemoryProvider(values: ["http.port": 9000])
        let environment = InMemoryProvider(values: ["http.port": 9001, "database.path": "/var/lib/beckon/db.sqlite"])
        let file = InMemoryProvider(values: ["http.port": 9002, "database.path": "x.sqlite", "limits.payload-bytes": 1000])
        let configuration = try BeckonServerConfiguration(reading: ConfigReader(providers: [flags, environment, file]))
        #expect(configuration.http.port == 9000)
        #expect(configuration.database.path == "/var/lib/beckon/db.sqlite")
        #expect(configuration.limits.payloadBytes == 1000)
    }

    @Test func nonsenseIsRefusedWithTheKeyNamed() {
        #expect(throws: BeckonConfigurationError.invalid(key: "http.port", "must be 0-65535")) {
            try BeckonServerConfiguration(reading: ConfigReader(provider: InMemoryProvider(values: ["http.port": 70000])))
        }
        #expect(throws: BeckonConfigurationError.self) {
            try BeckonServerConfiguration(reading: ConfigReader(provider: InMemoryProvider(values: [
                "limits.payload-bytes": 2_000_000, "limits.body-bytes": 1_000_000,
            ])))
        }
        #expect(throws: BeckonConfigurationError.invalid(key: "database.url", "must be postgres://user[:password]@host[:port]/database")) {
            try BeckonServerConfiguration(reading: ConfigReader(provider: InMemoryProvider(values: ["database.url": "mysql://x"])))
        }
    }

    @Test func aPostgresURLSelectsPostgreSQL() throws {
        let configuration = try BeckonServerConfiguration(
            reading: ConfigReader(provider: InMemoryProvider(values: ["database.url": "postgres://beckon@127.0.0.1:5432/beckon"])))
        #expect(configuration.database.url == "postgres://beckon@127.0.0.1:5432/beckon")
    }
}
