@testable import BeckonServer
import Testing

@Suite struct BearerCredentialTests {
    @Test func theSecretIsToldApartByItsPrefixAndTrimmedOfSpacesAndTabs() {
        #expect(BearerCredential(authorization: "Bearer bk_a_b") == .apiKey("bk_a_b"))
        #expect(BearerCredential(authorization: "bearer \t bkd_a_b \t") == .device("bkd_a_b"))
        #expect(BearerCredential(authorization: "BEARER eyJ.x.y") == .other("eyJ.x.y"))
        // Only the ends are trimmed: what is inside stays, and the secret is compared whole later.
        #expect(BearerCredential(authorization: "Bearer a b") == .other("a b"))
    }

    @Test func noBearerSecretIsNoCredential() {
        #expect(BearerCredential(authorization: nil) == nil)
        #expect(BearerCredential(authorization: "Basic YTpi") == nil)
        #expect(BearerCredential(authorization: "Bearer") == nil)
        #expect(BearerCredential(authorization: "Bearer \t\t") == nil)
    }
}
