import APNSCore
import Foundation
import Testing

@Suite struct Base64URLTests {
    /// Foundation's base64 with RFC 4648 §5's substitutions, as the reference.
    private static func reference(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    @Test func encodesAsFoundationDoesWithoutPaddingAndDecodesBack() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...64 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let text = Base64URL.encode(bytes)
            #expect(text == Self.reference(bytes))
            #expect(Base64URL.decode(text) == bytes)
        }
        // Every character of the alphabet, 62 and 63 included.
        let all = Array(0..<48).map { UInt8($0 * 4 + 3) } + [0xfb, 0xff, 0xbf]
        #expect(Base64URL.decode(Base64URL.encode(all)) == all)
        #expect(Base64URL.encode([0xfb, 0xff]) == "-_8")
    }

    @Test func otherSymbolsFor62And63() {
        let symbols = Base64URL.Symbols("-", ".")
        #expect(Base64URL.encode([0xfb, 0xff], symbols: symbols) == "-.8")
        #expect(Base64URL.decode("-.8", symbols: symbols) == [0xfb, 0xff])
        #expect(Base64URL.decode("-_8", symbols: symbols) == nil)
    }

    @Test func refusesWhatIsNotUnpaddedBase64URL() {
        #expect(Base64URL.decode("YQ==") == nil)  // padded: JWS never pads (RFC 7515 §2)
        #expect(Base64URL.decode("a+b/") == nil)  // standard base64's symbols
        #expect(Base64URL.decode("abcde") == nil)  // five characters cannot end a group
        #expect(Base64URL.decode("ab c") == nil)
        #expect(Base64URL.decode("") == [])
        #expect(Base64URL.decode("YQ") == Array("a".utf8))
    }
}
