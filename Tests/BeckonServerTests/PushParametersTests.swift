@testable import BeckonServer
import BeckonStore
import Testing

/// RFC 8599 push parameters as Linphone/Flexisip send them (seed 003).
@Suite struct PushParametersTests {
    @Test func remoteAndVoIPTokens() throws {
        let parsed = try PushParameters(
            provider: "apns", param: "ABCD1234.org.linphone.phone.remote&voip",
            prid: "00fc13adff78512a:voip&c11292f7b74733d0:remote", path: "p")
        #expect(parsed.teamID == "ABCD1234")
        #expect(parsed.bundleID == "org.linphone.phone")
        #expect(parsed.environment == nil)
        #expect(parsed.remoteToken == "c11292f7b74733d0")
        #expect(parsed.voipToken == "00fc13adff78512a")
    }

    @Test func aLoneTokenIsForTheOneServiceNamed() throws {
        let parsed = try PushParameters(
            provider: "apns.dev", param: "ABCD1234.org.linphone.phone.remote", prid: "c11292f7b74733d0", path: "p")
        #expect(parsed.environment == .sandbox)
        #expect(parsed.remoteToken == "c11292f7b74733d0")
        #expect(parsed.voipToken == nil)
    }

    @Test func malformedParametersNameTheirField() {
        let cases: [(String, String, String, String)] = [
            ("fcm", "T.b.remote", "ab", "p.pn-provider"),
            ("apns", "T.remote", "ab", "p.pn-param"),
            ("apns", "T.b.push", "ab", "p.pn-param"),
            ("apns", "T.b.remote", "ab:voip", "p.pn-prid"),
            ("apns", "T.b.remote&voip", "ab", "p.pn-prid"),
            ("apns", "T.b.remote", "xyz:remote", "p.pn-prid"),
            ("apns", "T.b.remote", "ab:remote&cd:remote", "p.pn-prid"),
        ]
        for (provider, param, prid, field) in cases {
            #expect(throws: APIError.self) {
                try PushParameters(provider: provider, param: param, prid: prid, path: "p")
            }
            do {
                _ = try PushParameters(provider: provider, param: param, prid: prid, path: "p")
            } catch {
                #expect(error.message.hasPrefix("\(field):"), "\(param) \(prid)")
            }
        }
    }
}
