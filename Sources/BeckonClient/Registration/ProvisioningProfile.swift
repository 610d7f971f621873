import Foundation

/// The APNs environment of this build's device tokens, from its embedded provisioning profile
/// (apns.md B.2: the `aps-environment` entitlement follows the profile, not the build
/// configuration). Portable, so it is tested on Linux; `BeckonSetup.apnsEnvironment()` reads the
/// file on iOS.
public enum ProvisioningProfile {
    /// `"sandbox"` or `"production"` for the registration: the profile's `aps-environment`, or
    /// production when there is no profile (an App Store build carries none). `profile` is the
    /// file's bytes: a CMS-signed property list, read here without checking the signature (the
    /// system already did, to launch the app).
    public static func apnsEnvironment(profile: Data?) -> String {
        guard let profile, let entitlements = entitlements(in: profile),
            let value = entitlements["aps-environment"] as? String
        else { return "production" }
        return value == "development" ? "sandbox" : "production"
    }

    /// The `Entitlements` dictionary of the property list inside the signed profile.
    static func entitlements(in profile: Data) -> [String: Any]? {
        guard let start = profile.range(of: Data("<?xml".utf8)),
            let end = profile.range(of: Data("</plist>".utf8), in: start.lowerBound..<profile.endIndex)
        else { return nil }
        let plist = profile.subdata(in: start.lowerBound..<end.upperBound)
        let root = try? PropertyListSerialization.propertyList(from: plist, options: [], format: nil)
        return (root as? [String: Any])?["Entitlements"] as? [String: Any]
    }
}
