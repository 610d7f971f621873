import APNSCore
import APNSEmulator
import Crypto
import Foundation
import Testing

/// `beckon push` as a user runs it: the real binary, against the emulator, output parsed.
@Suite struct PushCommandTests {
    @Test func everyPushTypeGets200AndExitZero() async throws {
        try await CLIHarness.run { harness in
            let types: [(String, [String])] = [
                ("alert", ["--title", "Hi", "--body", "There", "--badge", "1", "--sound", "default"]),
                ("background", ["--payload", #"{"sync":1}"#]),
                ("voip", ["--payload", #"{"call":"c1"}"#]),
                ("location", []),
                ("complication", []),
                ("fileprovider", ["--payload", #"{"container-identifier":"root","domain":"d"}"#]),
                ("liveactivity", ["--payload", #"{"event":"update","content-state":{"score":1}}"#]),
                ("pushtotalk", []),
                ("widgets", []),
                ("controls", []),
            ]
            for (type, flags) in types {
                let token = CLIHarness.newToken()
                let result = try await harness.push(["--type", type, "--token", token] + flags)
                #expect(result.exitCode == 0, "\(type): \(result.output) \(result.errors)")
                let line = try #require(result.lines.first)
                #expect(line["status"] as? Int == 200, "\(type)")
                #expect(line["token"] as? String == token)
                #expect((line["apns_id"] as? String)?.count == 36)
                #expect(harness.emulator.deliveries(to: token).count == 1, "\(type)")
            }
            // MDM: the topic is the certificate's, given as --topic.
            let mdm = try await harness.push(["--type", "mdm", "--token", CLIHarness.newToken(), "--payload", #"{"mdm":"magic"}"#], topic: "com.apple.mgmt.External.1")
            #expect(mdm.exitCode == 0, "\(mdm.output) \(mdm.errors)")
        }
    }

    @Test func manyTokensGetOneLineEach() async throws {
        try await CLIHarness.run { harness in
            let tokens = (0..<50).map { _ in CLIHarness.newToken() }
            let file = harness.directory.appendingPathComponent("tokens.txt")
            try tokens.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
            let result = try await harness.push(["--tokens-file", file.path, "--body", "hello", "--connections", "2"])
            #expect(result.exitCode == 0)
            #expect(Set(result.lines.compactMap { $0["token"] as? String }) == Set(tokens))
        }
    }

    @Test func unregisteredTokenPrints410WithTimestampAndExitsNonZero() async throws {
        try await CLIHarness.run { harness in
            let token = CLIHarness.newToken()
            #expect(try await harness.push(["--token", token, "--body", "first"]).exitCode == 0)
            try harness.emulator.unregisterDevice(token: token)
            let result = try await harness.push(["--token", token, "--body", "second"])
            #expect(result.exitCode == 1)
            let line = try #require(result.lines.first)
            #expect(line["status"] as? Int == 410)
            #expect(line["reason"] as? String == "Unregistered")
            #expect((line["timestamp"] as? Int ?? 0) > 1_600_000_000_000)  // Milliseconds.
        }
    }

    @Test func refusalsPrintStatusAndReason() async throws {
        try await CLIHarness.run { harness in
            // 400: an app token used for a VoIP push.
            let appToken = CLIHarness.newToken()
            _ = try await harness.push(["--token", appToken, "--body", "x"])
            let wrongTopic = try await harness.push(["--type", "voip", "--token", appToken])
            #expect(wrongTopic.exitCode == 1)
            #expect(wrongTopic.lines.first?["status"] as? Int == 400)
            #expect(wrongTopic.lines.first?["reason"] as? String == "DeviceTokenNotForTopic")

            // 403: a key the emulator does not know.
            let otherKey = harness.directory.appendingPathComponent("other.p8")
            try P256.Signing.PrivateKey().pemRepresentation.write(to: otherKey, atomically: true, encoding: .utf8)
            let forbidden = try await harness.push(["--token", CLIHarness.newToken(), "--body", "x"], keyFile: otherKey.path)
            #expect(forbidden.exitCode == 1)
            #expect(forbidden.lines.first?["status"] as? Int == 403)
            #expect(forbidden.lines.first?["reason"] as? String == "InvalidProviderToken")

            // 413: Beckon refuses oversize payloads before sending, so the emulator is told to answer it.
            let token = CLIHarness.newToken()
            harness.emulator.respond(with: .payloadTooLarge, deviceToken: token)
            let tooLarge = try await harness.push(["--token", token, "--body", "x"])
            #expect(tooLarge.exitCode == 1)
            #expect(tooLarge.lines.first?["status"] as? Int == 413)
            #expect(tooLarge.lines.first?["reason"] as? String == "PayloadTooLarge")
        }
    }

    @Test func flagsThatBreakApplesRulesAreRefusedBeforeSending() async throws {
        try await CLIHarness.run { harness in
            let background = try await harness.push(["--type", "background", "--priority", "10", "--token", CLIHarness.newToken()])
            #expect(background.exitCode != 0 && background.exitCode != 1)
            #expect(background.errors.contains("priority 5"))
            let oversize = try await harness.push(["--token", CLIHarness.newToken(), "--body", String(repeating: "a", count: 5000)])
            #expect(oversize.errors.contains("4096"))
            let truncated = try await harness.push(["--token", CLIHarness.newToken(), "--body", String(repeating: "a", count: 5000), "--truncate"])
            #expect(truncated.exitCode == 0)
            let badToken = try await harness.push(["--token", "xyz"])
            #expect(badToken.errors.contains("hex"))
            #expect(harness.emulator.counters.requests == 1)  // Only the truncated one was sent.
        }
    }

    @Test func jwtCommandPrintsAVerifiableToken() async throws {
        try await CLIHarness.run { harness in
            let result = try await harness.beckon(["jwt", "--team-id", CLIHarness.teamID, "--key-id", CLIHarness.keyID, "--key-file", harness.keyFile])
            #expect(result.exitCode == 0)
            let parts = result.output.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".")
            #expect(parts.count == 3)
            let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
            #expect(harness.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)))
        }
    }
}
