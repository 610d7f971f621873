import BeckonClient
import Foundation
import Testing

/// The registration's APNs environment follows the provisioning profile (apns.md B.2).
@Suite struct ProvisioningProfileTests {
    /// A profile as Xcode embeds it: DER bytes of the signature around an XML property list.
    static func profile(apsEnvironment: String?) -> Data {
        let entitlement = apsEnvironment.map { "<key>aps-environment</key><string>\($0)</string>" } ?? ""
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0"><dict><key>Name</key><string>Chat Development</string>
            <key>Entitlements</key><dict>\(entitlement)<key>application-identifier</key><string>TEAMID.com.example.chat</string></dict>
            </dict></plist>
            """
        return Data([0x30, 0x82, 0x3f, 0x12, 0x06, 0x09, 0x2a, 0x86]) + Data(plist.utf8) + Data([0xa0, 0x82, 0x0d, 0x00, 0x3c])
    }

    @Test func aDevelopmentProfileMeansSandboxTokens() {
        #expect(ProvisioningProfile.apnsEnvironment(profile: Self.profile(apsEnvironment: "development")) == "sandbox")
    }

    @Test func aDistributionProfileMeansProductionTokens() {
        #expect(ProvisioningProfile.apnsEnvironment(profile: Self.profile(apsEnvironment: "production")) == "production")
    }

    @Test func noProfileIsAnAppStoreBuild() {
        #expect(ProvisioningProfile.apnsEnvironment(profile: nil) == "production")
        #expect(ProvisioningProfile.apnsEnvironment(profile: Data("not a profile".utf8)) == "production")
        #expect(ProvisioningProfile.apnsEnvironment(profile: Self.profile(apsEnvironment: nil)) == "production")
    }
}
