import APNSCore
import Foundation
import Testing

@Suite struct APNSResponseTests {
    @Test func everyDocumentedReasonRoundTripsWithItsStatus() {
        #expect(APNSReason.documented.count == 32)
        for reason in APNSReason.documented {
            #expect(APNSReason(rawValue: reason.rawValue) == reason)
            #expect(reason.status != nil)
        }
        #expect(APNSReason(rawValue: "Unregistered").status == 410)
        #expect(APNSReason(rawValue: "TooManyProviderTokenUpdates").status == 429)
        #expect(APNSReason(rawValue: "Shutdown").status == 503)
    }

    @Test func unknownReasonsAreKeptVerbatim() {
        let reason = APNSReason(rawValue: "BadEnvironmentKeyInToken")
        #expect(reason == .unknown("BadEnvironmentKeyInToken"))
        #expect(reason.rawValue == "BadEnvironmentKeyInToken")
    }

    @Test func retryClassesFollowApple() {
        for never in ["BadDeviceToken", "DeviceTokenNotForTopic", "Forbidden", "ExpiredToken", "Unregistered", "PayloadTooLarge"] {
            #expect(APNSReason(rawValue: never).retryClass == .never)
        }
        for later in ["TooManyRequests", "InternalServerError", "ServiceUnavailable", "Shutdown"] {
            #expect(APNSReason(rawValue: later).retryClass == .retryWithDelay)
        }
        #expect(APNSReason.badTopic.retryClass == .fixFirst)
        #expect(APNSReason.expiredProviderToken.retryClass == .refreshTokenAndRetry)
        // An unknown reason falls back on the status.
        #expect(APNSResponse(status: 503, reason: .unknown("Brownout")).retryClass == .retryWithDelay)
        #expect(APNSResponse(status: 400, reason: .unknown("Odd")).retryClass == .fixFirst)
    }

    @Test func errorBodyWithMillisecondTimestamp() {
        let parsed = APNSResponse.parseErrorBody(Array(#"{"reason":"Unregistered","timestamp":1700000000123}"#.utf8))
        #expect(parsed.reason == .unregistered)
        #expect(parsed.timestamp == Date(timeIntervalSince1970: 1_700_000_000.123))
        #expect(APNSResponse.parseErrorBody(Array("not json".utf8)).reason == nil)
    }

    @Test func deviceTokens() throws {
        let token = try APNSDeviceToken(hex: String(repeating: "AB", count: 32))
        #expect(token.hex == String(repeating: "ab", count: 32))
        #expect(token.redacted == "abababab…")
        #expect("\(token)".count < 12)
        #expect(throws: APNSDeviceTokenError.notHex) { try APNSDeviceToken(hex: String(repeating: "zz", count: 32)) }
        #expect(throws: APNSDeviceTokenError.badLength(10)) { try APNSDeviceToken(hex: "0123456789") }
        #expect(try APNSDeviceToken(bytes: [0x00, 0xff] + Array(repeating: 1, count: 30)).hex.hasPrefix("00ff01"))
    }

    @Test func pushTypeTopicsAndLimits() {
        #expect(APNSPushType.voip.maximumPayloadSize == 5120)
        #expect(APNSPushType.alert.maximumPayloadSize == 4096)
        #expect(APNSPushType.background.topic(forBundleID: "x.y") == "x.y")
    }
}

@Suite struct UUIDHexTests {
    @Test func parsesBothCasesAndRejectsMalformed() {
        let id = UUID()
        #expect(UUID(hexString: id.uuidString) == id)
        #expect(UUID(hexString: id.uuidString.lowercased()) == id)
        #expect(UUID(hexString: "not-a-uuid") == nil)
        #expect(UUID(hexString: String(id.uuidString.dropLast())) == nil)
        #expect(UUID(hexString: id.uuidString.replacingOccurrences(of: "-", with: "x")) == nil)
        #expect(UUID(hexString: id.uuidString + "0") == nil)
        #expect(id.lowercaseString == id.uuidString.lowercased())
    }
}

@Suite struct UUIDRandomTests {
    @Test func randomIDsAreVersion4AndDistinct() {
        let ids = (0..<1000).map { _ in UUID.randomV4() }
        #expect(Set(ids).count == 1000)
        for id in ids.prefix(20) {
            let text = id.uuidString
            #expect(Array(text)[14] == "4")
            #expect("89AB".contains(Array(text)[19]))
        }
    }

    /// The random words come from a shared block refilled under a lock: callers on many threads
    /// must never get the same words.
    @Test func concurrentCallersGetDistinctIDs() async {
        let ids = await withTaskGroup(of: [UUID].self) { group in
            for _ in 0..<8 { group.addTask { (0..<500).map { _ in UUID.randomV4() } } }
            var all: [UUID] = []
            for await part in group { all += part }
            return all
        }
        #expect(Set(ids).count == 4000)
        #expect(ids.allSatisfy { $0.lowercaseString == $0.uuidString.lowercased() })
    }

    @Test func timeOrderedIDsAreVersion7CarryTheirMillisecondAndSortByIt() {
        let start = Date(timeIntervalSince1970: 1_795_000_000.123)
        let ids = (0..<1000).map { UUID.timeOrdered(at: start.addingTimeInterval(Double($0) / 100)) }
        #expect(Set(ids).count == 1000)
        #expect(ids.map(\.lowercaseString) == ids.map(\.lowercaseString).sorted(), "later ids sort after earlier ones")
        let first = Array(ids[0].uuidString)
        #expect(first[14] == "7")
        #expect("89AB".contains(first[19]))
        // RFC 9562 §5.7: the first 48 bits are the Unix time in milliseconds.
        let hex = ids[0].uuidString.replacingOccurrences(of: "-", with: "").prefix(12)
        #expect(UInt64(hex, radix: 16) == 1_795_000_000_123)
        // Within one millisecond they are distinct, not ordered.
        let same = (0..<1000).map { _ in UUID.timeOrdered(at: start) }
        #expect(Set(same).count == 1000)
    }

    /// A window of time is a range of ids: those from the prefix of its start (inclusive) to the
    /// prefix of its end (exclusive).
    @Test func theIDsOfATimeRangeAreTheTextsBetweenTwoPrefixes() {
        let start = Date(timeIntervalSince1970: 1_795_000_000.5)
        #expect(UUID.timeOrderedPrefix(at: start) == "01a1ee56-5ff4")
        #expect(UUID.timeOrderedPrefix(at: Date(timeIntervalSince1970: 0.001)) == "00000000-0001")
        let (from, to) = (UUID.timeOrderedPrefix(at: start), UUID.timeOrderedPrefix(at: start.addingTimeInterval(60)))
        for offset in [-0.001, 0, 0.001, 30, 59.999, 60, 61] {
            let id = UUID.timeOrdered(at: start.addingTimeInterval(offset)).lowercaseString
            #expect((id >= from && id < to) == (offset >= 0 && offset < 60), "\(offset)")
        }
    }
}
