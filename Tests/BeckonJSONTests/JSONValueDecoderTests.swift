@testable import BeckonJSON
import Foundation
import Testing

@Suite struct JSONValueDecoderTests {
    typealias Fixtures = JSONStreamEncoderTests

    /// Encoded by the stream encoder, decoded by ours and by Foundation's: all three equal.
    func roundTrip<T: Codable & Equatable>(_ value: T) throws -> T {
        let bytes = try JSONStreamEncoder().encode(value)
        let ours = try JSONValueDecoder().decode(T.self, from: bytes)
        #expect(try ours == JSONDecoder().decode(T.self, from: Data(bytes)))
        return ours
    }

    @Test func whatTheStreamEncoderWritesDecodesToAnEqualValue() throws {
        #expect(try roundTrip(Fixtures.planner) == Fixtures.planner)
        var bare = Fixtures.planner
        bare.last = nil
        bare.inner.note = nil
        #expect(try roundTrip(bare) == bare)
        let events: [Fixtures.Event] = [.sent(id: UUID(), at: Date(timeIntervalSinceReferenceDate: 1.5)), .dropped("y", retries: [1, 2]), .idle]
        #expect(try roundTrip(events) == events)
        let dates = [Date(timeIntervalSinceReferenceDate: 123.456789), .distantPast, .distantFuture, Date()]
        #expect(try roundTrip(dates) == dates)
    }

    @Test func everyNumberWidthAndFoundationTypeDecodes() throws {
        struct Numbers: Codable, Equatable {
            var i8 = Int8.min, i16 = Int16.min, i32 = Int32.min, i64 = Int64.min, int = Int.max
            var u8 = UInt8.max, u16 = UInt16.max, u32 = UInt32.max, u64 = UInt64(Int64.max), uint = UInt(Int.max)
            var float: Float = 0.1, double = 0.1, whole = -7.0
            var list: [UInt64] = [0, UInt64(Int.max)]
            var floats: [Float?] = [1.5, nil]
        }
        #expect(try roundTrip(Numbers()) == Numbers())
        // Beyond Int's range the parser holds a number as a Double: refused, never rounded.
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(UInt64.self, from: Array("18446744073709551615".utf8)) }
        struct Things: Codable, Equatable {
            var data = Data([0, 1, 2, 255])
            var url = URL(string: "https://example.com/a?b=c")!
            var decimal = Decimal(string: "-12.345")!
            var uuid = UUID()
            var byNumber: [Int: String] = [1: "one", 2: "two"]
            var json: JSONValue = ["a": [1, 2.5, "x", .null, true]]
        }
        let things = Things()
        #expect(try roundTrip(things) == things)
    }

    @Test func absentAndNullOptionalsAreNil() throws {
        struct Holder: Decodable { var a: Int?; var b: [Int?]; var c: String? }
        let holder = try JSONValueDecoder().decode(Holder.self, from: Array(#"{"a":null,"b":[1,null]}"#.utf8))
        #expect(holder.a == nil && holder.c == nil && holder.b == [1, nil])
    }

    @Test func superDecodersReadWhatSuperEncodersWrote() throws {
        class Base: Codable {
            var a: Int
            init(a: Int) { self.a = a }
        }
        final class Derived: Base {
            var b: String
            enum Keys: CodingKey { case b, parent }
            init(a: Int, b: String) { self.b = b; super.init(a: a) }
            required init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: Keys.self)
                b = try container.decode(String.self, forKey: .b)
                try super.init(from: container.superDecoder(forKey: .parent))
            }
            override func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                try container.encode(b, forKey: .b)
                try super.encode(to: container.superEncoder(forKey: .parent))
            }
        }
        let decoded = try JSONValueDecoder().decode(Derived.self, from: try JSONStreamEncoder().encode(Derived(a: 4, b: "x")))
        #expect(decoded.a == 4 && decoded.b == "x")
    }

    @Test func wrongTypesAndMissingKeysNameThePath() throws {
        struct Inner: Decodable { var n: Int }
        struct Outer: Decodable { var items: [Inner] }
        func failure(_ text: String) -> DecodingError? {
            #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(Outer.self, from: Array(text.utf8)) }
        }
        func path(_ error: DecodingError?) -> [String] {
            switch error {
            case .typeMismatch(_, let context), .dataCorrupted(let context), .keyNotFound(_, let context), .valueNotFound(_, let context):
                context.codingPath.map(\.stringValue)
            default: []
            }
        }
        guard case .typeMismatch = failure(#"{"items":[{"n":1},{"n":"2"}]}"#) else { Issue.record("a string read as an Int"); return }
        #expect(path(failure(#"{"items":[{"n":1},{"n":"2"}]}"#)) == ["items", "Index 1", "n"])
        guard case .keyNotFound(let key, _) = failure(#"{"items":[{}]}"#) else { Issue.record("a missing key"); return }
        #expect(key.stringValue == "n")
        guard case .dataCorrupted = failure(#"{"items":[{"n":3.5}]}"#) else { Issue.record("3.5 read as an Int"); return }
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(UInt8.self, from: Array("300".utf8)) }
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(UInt.self, from: Array("-1".utf8)) }
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(Data.self, from: Array(#""not base64!""#.utf8)) }
    }

    @Test func malformedJSONIsRefusedByTheParser() {
        #expect(throws: JSONParser.Failure.self) { try JSONValueDecoder().decode([Int].self, from: Array("[1,]".utf8)) }
        #expect(throws: JSONParser.Failure.self) { try JSONValueDecoder().decode([Int].self, from: Array("[1] trailing".utf8)) }
    }

    // MARK: The encoder's options, held to Foundation's output

    struct Hints: Codable { var title: String?; var body: String?; var args: [String]?; var counts: [String: Int] }

    static let hints = Hints(
        title: "a/b \"quoted\" é 😀 \u{1F} tab\t", body: nil, args: ["x/y", ""], counts: ["zeta": 1, "alpha": 2, "Beta": 3, "a10": 4, "a9": 5])

    @Test func sortedKeysIsFoundationsSortedOutput() throws {
        let foundation = JSONEncoder()
        foundation.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        #expect(try JSONStreamEncoder(options: .sortedKeys).encode(Self.hints) == Array(foundation.encode(Self.hints)))
        #expect(try JSONStreamEncoder(options: .sortedKeys).encode(Fixtures.planner) == Array(foundation.encode(Fixtures.planner)))
    }

    @Test func escapedSlashesIsFoundationsDefaultSortedOutput() throws {
        let foundation = JSONEncoder()
        foundation.outputFormatting = [.sortedKeys]
        #expect(try JSONStreamEncoder(options: [.sortedKeys, .escapedSlashes]).encode(Self.hints) == Array(foundation.encode(Self.hints)))
    }

    @Test func prettyPrintedIsIndentedAndReadsBackEqual() throws {
        let bytes = try JSONStreamEncoder(options: .prettyPrinted).encode(Self.hints)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("{\n  \"args\" : [\n    \"x/y\",\n"))
        #expect(text.hasSuffix("\n}\n"))
        #expect(try JSONParser.parse(bytes) == JSONParser.parse(try JSONStreamEncoder().encode(Self.hints)))
        let foundation = JSONEncoder()
        foundation.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        #expect(Array(bytes.dropLast()) == Array(try foundation.encode(Self.hints)), "the layout the CLI always printed")
    }

    /// The API's dates: what its encoder with a custom RFC 3339 strategy wrote, byte for byte.
    @Test func rfc3339DatesAreTheAPIsTimestamps() throws {
        struct Report: Encodable { var since: Date; var at: [Date] }
        let report = Report(since: Date(timeIntervalSince1970: 1_795_875_577.206), at: [Date(timeIntervalSince1970: 0)])
        let foundation = JSONEncoder()
        foundation.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        foundation.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        }
        let ours = try JSONStreamEncoder(options: [.sortedKeys, .rfc3339Dates]).encode(report)
        #expect(ours == Array(try foundation.encode(report)))
        #expect(String(decoding: ours, as: UTF8.self).contains(#""since":"2026-11-28T"#))
    }

    @Test func aJSONValueIsWrittenWithItsKeysSorted() throws {
        let value: JSONValue = ["b": 1, "a": ["d": 2, "c": 3]]
        #expect(try JSONStreamEncoder().encode(value) == Array(#"{"a":{"c":3,"d":2},"b":1}"#.utf8))
        struct Holder: Encodable { var payload: JSONValue }
        #expect(try JSONStreamEncoder().encode(Holder(payload: value)) == Array(#"{"payload":{"a":{"c":3,"d":2},"b":1}}"#.utf8))
    }
}
