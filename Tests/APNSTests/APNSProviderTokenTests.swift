@testable import APNS
import APNSCore
import Crypto
import Foundation
import NIOConcurrencyHelpers
import Testing

@Suite struct APNSProviderTokenTests {
    let privateKey = P256.Signing.PrivateKey()

    @Test func tokenIsES256SignedAndVerifiesWithThePublicKey() throws {
        let key = APNSSigningKey(teamID: "TEAM123456", keyID: "KEY1234567", privateKey: privateKey)
        let token = try key.providerToken(issuedAt: Date(timeIntervalSince1970: 1_700_000_000))
        let parts = token.split(separator: ".")
        #expect(parts.count == 3)
        let header = try JSONSerialization.jsonObject(with: Data(Base64URL.decode(parts[0])!)) as? [String: Any]
        let claims = try JSONSerialization.jsonObject(with: Data(Base64URL.decode(parts[1])!)) as? [String: Any]
        #expect(header?["alg"] as? String == "ES256")
        #expect(header?["kid"] as? String == "KEY1234567")
        #expect(claims?["iss"] as? String == "TEAM123456")
        #expect(claims?["iat"] as? Int == 1_700_000_000)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: Base64URL.decode(parts[2])!)
        let signed = Data((parts[0] + "." + parts[1]).utf8)
        #expect(privateKey.publicKey.isValidSignature(signature, for: signed))
        #expect(!P256.Signing.PrivateKey().publicKey.isValidSignature(signature, for: signed))
    }

    @Test func keyLoadsFromPKCS8PEM() throws {
        let key = try APNSSigningKey(teamID: "T", keyID: "K", pem: privateKey.pemRepresentation)
        #expect(key.privateKey.publicKey.rawRepresentation == privateKey.publicKey.rawRepresentation)
    }

    @Test func policyRefreshesAtRefreshAgeNotBefore() {
        var policy = APNSProviderTokenPolicy(refreshAge: 50 * 60)
        let start = Date(timeIntervalSince1970: 1_000_000)
        #expect(policy.decide(now: start) == .mint)
        policy.minted("t1", at: start)
        #expect(policy.decide(now: start.addingTimeInterval(49 * 60)) == .use("t1"))
        #expect(policy.decide(now: start.addingTimeInterval(50 * 60)) == .mint)
    }

    @Test func refreshAgeIsClampedToApplesWindow() {
        #expect(APNSProviderTokenPolicy(refreshAge: 60).refreshAge == 20 * 60)
        #expect(APNSProviderTokenPolicy(refreshAge: 3 * 3600).refreshAge == 59 * 60)
    }

    @Test func expiredProviderTokenRemintsButNeverWithin20Minutes() {
        var policy = APNSProviderTokenPolicy()
        let start = Date(timeIntervalSince1970: 1_000_000)
        policy.minted("t1", at: start)
        policy.rejectedAsExpired("t1")
        // Apple: not more than once every 20 minutes, even now.
        #expect(policy.decide(now: start.addingTimeInterval(5 * 60)) == .use("t1"))
        #expect(policy.decide(now: start.addingTimeInterval(20 * 60)) == .mint)
        // A rejection of an older token does not condemn the current one.
        policy.minted("t2", at: start.addingTimeInterval(20 * 60))
        policy.rejectedAsExpired("t1")
        #expect(policy.decide(now: start.addingTimeInterval(41 * 60)) == .use("t2"))
    }

    @Test func clockJumpingBackwardsFarMintsAgain() {
        var policy = APNSProviderTokenPolicy()
        let start = Date(timeIntervalSince1970: 1_000_000)
        policy.minted("t1", at: start)
        #expect(policy.decide(now: start.addingTimeInterval(-60)) == .use("t1"))
        #expect(policy.decide(now: start.addingTimeInterval(-3600)) == .mint)
    }

    @Test func sourceSharesOneTokenAcrossCallersOnAnInjectedClock() throws {
        let now = NIOLockedValueBox(Date(timeIntervalSince1970: 1_700_000_000))
        let source = APNSProviderTokenSource(
            key: APNSSigningKey(teamID: "T", keyID: "K", privateKey: privateKey), now: { now.withLockedValue { $0 } })
        let first = try source.token()
        #expect(try source.token() == first)
        now.withLockedValue { $0 += 30 * 60 }
        #expect(try source.token() == first)
        now.withLockedValue { $0 += 20 * 60 }
        let second = try source.token()
        #expect(second != first)
        #expect(source.issuedAt == Date(timeIntervalSince1970: 1_700_000_000 + 50 * 60))
    }

    @Test func backoffGrowsAndIsCapped() {
        let backoff = APNSBackoff(base: 0.1, cap: 2)
        #expect(backoff.delay(attempt: 1, random: 1) == 0.1)
        #expect(backoff.delay(attempt: 3, random: 1) == 0.4)
        #expect(backoff.delay(attempt: 30, random: 1) == 2)
        #expect(backoff.delay(attempt: 30, random: 0) == 0.01)
    }
}
