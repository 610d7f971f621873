@testable import BeckonJSON
import Foundation
import Testing

@Suite struct JSONParserTests {
    func parse(_ text: String) throws -> JSONValue { try JSONParser.parse(Array(text.utf8)) }

    @Test func valuesOfEveryKind() throws {
        let value = try parse(#" {"a": [1, -2.5, 3e2, true, false, null], "b": {"c": "d"}, "big": 9223372036854775807} "#)
        #expect(value == .object([
            "a": .array([.int(1), .double(-2.5), .double(300), .bool(true), .bool(false), .null]),
            "b": .object(["c": .string("d")]),
            "big": .int(Int.max),
        ]))
        #expect(try parse("18446744073709551616") == .double(18446744073709551616))  // Beyond Int64.
    }

    @Test func escapesAndUnicode() throws {
        #expect(try parse(#""a\"b\\c\/d\n\t\u00e9\ud83d\ude00""#) == .string("a\"b\\c/d\n\té😀"))
        #expect(try parse(#""héllo 😀""#) == .string("héllo 😀"))
    }

    @Test func whatJSONRefusesIsRefusedWithItsPlace() {
        for bad in [
            "", "{", #"{"a":1,}"#, "[1,]", "01", "1.", "-", "+1", "nul", #""abc"#, "{} x", #"{"a" 1}"#,
            #""\ud800""#, #""\x""#, "\"a\u{01}b\"", "// c\n1", "NaN", "1e999",
        ] {
            #expect(throws: JSONParser.Failure.self, "\(bad)") { try parse(bad) }
        }
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x22, 0xFF, 0x22]) }  // Not UTF-8.
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(throws: JSONParser.Failure.self) { try parse(deep) }
        #expect(throws: JSONParser.Failure(offset: 6, reason: "invalid literal")) {
            try JSONParser.parse(Array(#"{"a": tru}"#.utf8))
        }
    }

    @Test func agreesWithFoundationOnWellFormedInput() throws {
        let text = #"{"recipients":{"users":["u1","u2"]},"kind":"message","payload":{"text":"x","n":42,"f":0.5}}"#
        let ours = try parse(text)
        let theirs = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        #expect(ours == theirs)
    }

    @Test func canonicalBytesAreWhatJSONEncoderWritesWithSortedKeys() throws {
        for text in [
            #"{"b":[1,-2.5,300,true,false,null],"a":{"y":"line\nbreak \"q\" \\ /","x":"é😀\u0001"},"n":-7}"#,
            #"[]"#, #"{}"#, #""just a string""#, "0.1", "-0", "12345678901234",
        ] {
            let value = try parse(text)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let expected = try encoder.encode(value)
            #expect(String(decoding: value.bytes, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
        }
    }
}
