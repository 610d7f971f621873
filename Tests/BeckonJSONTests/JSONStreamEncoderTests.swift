@testable import BeckonJSON
import Foundation
import Testing

@Suite struct JSONStreamEncoderTests {
    enum Mode: String, Codable { case wake, silent }

    enum Event: Codable, Equatable {
        case sent(id: UUID, at: Date)
        case dropped(String, retries: [Int])
        case idle
    }

    struct Empty: Codable, Equatable {}

    struct Attempt: Codable, Equatable {
        var at: Date
        var label: String
        var id: UUID
    }

    struct Inner: Codable, Equatable {
        var count: Int
        var flag: Bool
        var note: String?
        var empty: Empty
    }

    /// Shaped like the planner's per-device state.
    struct Planner: Codable, Equatable {
        var device: UUID
        var mode: Mode
        var inner: Inner
        var attempts: [Attempt]
        var last: Attempt?
        var missing: Int?
        var noAttempts: [Attempt]
        var events: [Event]
        var grid: [[Int?]]
        var budgets: [String: Int]
        var deadline: Date
        var ratio: Double
    }

    static let planner = Planner(
        device: UUID(),
        mode: .silent,
        inner: Inner(count: -3, flag: true, note: "n", empty: Empty()),
        attempts: [
            Attempt(at: Date(timeIntervalSinceReferenceDate: 123.456789), label: "first", id: UUID()),
            Attempt(at: .distantPast, label: "", id: UUID()),
            Attempt(at: .distantFuture, label: "tab\there \"quoted\" back\\slash 😀", id: UUID()),
        ],
        last: Attempt(at: Date(timeIntervalSinceReferenceDate: 800_000_000), label: "last", id: UUID()),
        missing: nil,
        noAttempts: [],
        events: [.sent(id: UUID(), at: Date(timeIntervalSinceReferenceDate: -0.5)), .dropped("x", retries: []), .idle],
        grid: [[], [1, nil, 3], [nil]],
        budgets: ["a": 1, "b": 2],
        deadline: Date(timeIntervalSinceReferenceDate: 1e-7),
        ratio: 0.1
    )

    func roundTrip<T: Codable & Equatable>(_ value: T) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(try JSONStreamEncoder().encode(value)))
    }

    func text(_ value: some Encodable) throws -> String {
        String(decoding: try JSONStreamEncoder().encode(value), as: UTF8.self)
    }

    @Test func nestedStructsArraysAndOptionalsRoundTripThroughJSONDecoder() throws {
        #expect(try roundTrip(Self.planner) == Self.planner)
        var bare = Self.planner
        bare.last = nil
        bare.inner.note = nil
        #expect(try roundTrip(bare) == bare)
        #expect(!(try text(bare).contains("\"last\"")))  // Absent optionals are left out, as JSONEncoder does.
    }

    @Test func datesRoundTripExactly() throws {
        let dates = [
            Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: 123.456789),
            Date(timeIntervalSinceReferenceDate: -98765.4321), Date(timeIntervalSinceReferenceDate: 1e-300),
            Date(timeIntervalSinceReferenceDate: 1e20), .distantPast, .distantFuture, Date(),
        ]
        #expect(try roundTrip(dates) == dates)
        #expect(try roundTrip(Self.Attempt(at: dates[1], label: "x", id: UUID())).at == dates[1])
        #expect(try text(Date(timeIntervalSinceReferenceDate: 5)) == "5")
        #expect(try text(Date(timeIntervalSinceReferenceDate: 123.456789)) == "123.456789")
    }

    @Test func enumsWithAssociatedValuesRoundTripThroughNestedContainers() throws {
        let events: [Event] = [.sent(id: UUID(), at: Date(timeIntervalSinceReferenceDate: 1.5)), .dropped("y", retries: [1, 2]), .idle]
        #expect(try roundTrip(events) == events)
        #expect(try text(Event.dropped("y", retries: [1])) == #"{"dropped":{"_0":"y","retries":[1]}}"#)
        #expect(try text(Event.idle) == #"{"idle":{}}"#)
        #expect(try text([Mode.wake, .silent]) == #"["wake","silent"]"#)
    }

    @Test func emptyContainersAreWrittenEvenWhenNothingGoesInThem() throws {
        struct Holder: Codable, Equatable { var empty = Empty(); var none: [Int] = []; var nested: [[Empty]] = [[], [Empty()]] }
        #expect(try text(Holder()) == #"{"empty":{},"none":[],"nested":[[],[{}]]}"#)
        #expect(try roundTrip(Holder()) == Holder())
        #expect(try text(Empty()) == "{}")
        #expect(try text([Int]()) == "[]")
    }

    @Test func aValueThatWritesNothingIsAnEmptyObjectExceptAtTheTop() throws {
        struct Nothing: Encodable { func encode(to encoder: any Encoder) throws {} }
        struct Holder: Encodable { var a = Nothing(); var b = [Nothing()]; var c = 1 }
        #expect(try text(Holder()) == #"{"a":{},"b":[{}],"c":1}"#)
        #expect(throws: EncodingError.self) { try JSONStreamEncoder().encode(Nothing()) }
    }

    @Test func stringsAreEscapedAndRoundTrip() throws {
        let strings = ["quote \" backslash \\ slash /", "\n\r\t\u{08}\u{0C}\u{01}\u{1F}", "é 😀 👩‍👩‍👧", ""]
        #expect(try roundTrip(strings) == strings)
        #expect(try text(["a\"b\\c\nd\u{01}"]) == #"["a\"b\\c\nd\u0001"]"#)
    }

    @Test func outputIsCompactWithKeysInTheOrderEncoded() throws {
        struct Small: Encodable { var a = 1; var b: [Bool?] = [true, nil]; var c = "x" }
        #expect(try text(Small()) == #"{"a":1,"b":[true,null],"c":"x"}"#)
        #expect(try text("top") == #""top""#)
        #expect(try text(Optional<Int>.none) == "null")
    }

    @Test func everyNumberWidthRoundTrips() throws {
        struct Numbers: Codable, Equatable {
            var i8 = Int8.min, i16 = Int16.min, i32 = Int32.min, i64 = Int64.min, int = Int.max
            var u8 = UInt8.max, u16 = UInt16.max, u32 = UInt32.max, u64 = UInt64.max, uint = UInt.max
            var float: Float = 0.1, bigFloat = Float.greatestFiniteMagnitude, wholeFloat: Float = -42
            var double = 0.1, tiny = Double.leastNonzeroMagnitude, huge = Double.greatestFiniteMagnitude, whole = -7.0
            var u64s: [UInt64] = [0, .max]
            var floats: [Float?] = [1.5, nil]
        }
        #expect(try roundTrip(Numbers()) == Numbers())
        #expect(try text(UInt64.max) == "18446744073709551615")
        #expect(try text([0.1, 2, 1e300] as [Double]) == "[0.1,2,1e+300]")
    }

    @Test func foundationTypesAreWrittenAsJSONEncoderDefaultsExpect() throws {
        struct Things: Codable, Equatable {
            var data = Data([0, 1, 2, 255])
            var url = URL(string: "https://example.com/a?b=c")!
            var decimal = Decimal(string: "-12.345")!
            var uuid = UUID()
            var byNumber: [Int: String] = [1: "one", 2: "two"]
        }
        let things = Things()
        #expect(try roundTrip(things) == things)
        #expect(try text(Data([0, 1, 2, 255])) == #""AAEC/w==""#)
        #expect(try text(Decimal(string: "-12.345")!) == "-12.345")
    }

    @Test func nonFiniteNumbersThrowAsJSONEncoderDoes() throws {
        struct Holder: Encodable { var inner: [Double] }
        for value in [Double.nan, .infinity, -.infinity] {
            #expect(throws: EncodingError.self) { try JSONStreamEncoder().encode(Holder(inner: [1, value])) }
            #expect(throws: EncodingError.self) { try JSONStreamEncoder().encode(value) }
        }
        #expect(throws: EncodingError.self) { try JSONStreamEncoder().encode(["f": Float.infinity]) }
        #expect(throws: EncodingError.self) { try JSONStreamEncoder().encode([Date(timeIntervalSinceReferenceDate: .nan)]) }
        do {
            _ = try JSONStreamEncoder().encode(Holder(inner: [1, .nan]))
            Issue.record("NaN was encoded")
        } catch EncodingError.invalidValue(_, let context) {
            #expect(context.codingPath.map(\.stringValue) == ["inner", "Index 1"])
        }
    }

    @Test func containersAskedForAgainAndSuperEncodersMergeAsInJSONEncoder() throws {
        class Base: Encodable {
            var a = 1
            enum Keys: CodingKey { case a }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                try container.encode(a, forKey: .a)
            }
        }
        final class Derived: Base {
            var b = [2]
            enum DerivedKeys: CodingKey { case b, parent, unused }
            override func encode(to encoder: any Encoder) throws {
                try super.encode(to: encoder)
                var container = encoder.container(keyedBy: DerivedKeys.self)
                try container.encode(b, forKey: .b)
                try super.encode(to: container.superEncoder(forKey: .parent))
                _ = container.superEncoder(forKey: .unused)
                var list = container.nestedUnkeyedContainer(forKey: .unused)
                _ = list.superEncoder()
                try super.encode(to: list.superEncoder())
            }
        }
        let expected = #"{"a":1,"b":[2],"parent":{"a":1},"unused":{},"unused":[{},{"a":1}]}"#
        #expect(try text(Derived()) == expected)
    }

    @Test func decodesToTheSameValueAsJSONEncoderOutput() throws {
        let value = Self.planner
        let ours = try JSONStreamEncoder().encode(value)
        let theirs = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(Planner.self, from: Data(ours)) == JSONDecoder().decode(Planner.self, from: theirs))
        // The same JSON apart from key order and JSONEncoder's escaped slashes.
        #expect(try JSONParser.parse(ours) == JSONParser.parse(Array(theirs)))
    }
}
