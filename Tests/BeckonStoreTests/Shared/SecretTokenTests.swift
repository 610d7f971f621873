import Foundation
import Testing

@testable import BeckonStore

/// How secrets are issued and compared (API keys and device credentials alike).
@Suite struct SecretTokenTests {
    @Test func constantTimeComparison() {
        #expect(SecretToken.constantTimeEquals(Data([1, 2, 3]), Data([1, 2, 3])))
        #expect(!SecretToken.constantTimeEquals(Data([1, 2, 3]), Data([1, 2, 4])))
        #expect(!SecretToken.constantTimeEquals(Data([1, 2, 3]), Data([1, 2])))
        let a = SecretToken.issue(kind: "bk")
        let b = SecretToken.issue(kind: "bk")
        #expect(a.id != b.id && a.text != b.text)
        #expect(!a.text.dropFirst(3).contains("+") && !a.text.contains("/") && !a.text.contains("="))
    }
}
