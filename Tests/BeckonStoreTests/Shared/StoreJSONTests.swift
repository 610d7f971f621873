import BeckonProtocol
import Foundation
import Testing

@testable import BeckonStore

/// The JSON kept in text columns: what older versions wrote still reads, and a message's hints
/// are the same text as before, so a retry fingerprints the same across an upgrade.
@Suite struct StoreJSONTests {
    static let hints = NotificationHints(
        title: "Ann/Bob \"quoted\" é 😀 \u{1F}", subtitle: "s", body: "line\nbreak\ttab \\ back", titleLocKey: "T",
        titleLocArgs: ["a/b", ""], locKey: nil, locArgs: ["x"], threadID: "room/1", category: "MESSAGE", sound: "ping.caf")

    @Test func hintsAreTheTextFoundationsEncoderWrote() throws {
        let foundation = JSONEncoder()
        foundation.outputFormatting = [.sortedKeys]  // What the stores used before.
        #expect(try StoreJSON.encode(Self.hints) == String(decoding: try foundation.encode(Self.hints), as: UTF8.self))
        #expect(try StoreJSON.encode(NotificationHints()) == String(decoding: try foundation.encode(NotificationHints()), as: UTF8.self))
    }

    @Test func textsFoundationWroteReadBackEqual() throws {
        let capabilities = DeviceCapabilities(notificationServiceExtension: true, filtering: false, backgroundModes: ["remote-notification", "voip"])
        let limits = AppLimits()
        let foundation = JSONEncoder()
        foundation.outputFormatting = [.sortedKeys]
        func stored(_ value: some Encodable) throws -> String { String(decoding: try foundation.encode(value), as: UTF8.self) }
        #expect(try StoreJSON.decode(NotificationHints.self, from: stored(Self.hints)) == Self.hints)
        #expect(try StoreJSON.decode(DeviceCapabilities.self, from: stored(capabilities)) == capabilities)
        #expect(try StoreJSON.decodeRepeated(AppLimits.self, from: stored(limits)) == limits)
        #expect(try StoreJSON.decode(Set<PushEnvironment>.self, from: stored(["sandbox", "production"])) == [.sandbox, .production])
    }
}
