// Only for the few types JSONEncoder special-cases (Data, URL, Decimal) and fast paths for Date and UUID.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes an `Encodable` value to compact JSON, written straight into bytes with no intermediate tree.
///
/// A drop-in for `Foundation.JSONEncoder` on hot paths: its output decodes with `JSONDecoder`'s
/// default strategies to an equal value (dates as seconds since the reference date, `Data` as
/// Base64, `URL` as its absolute string, `Decimal` as a number). Keys are written in the order the
/// value encodes them. Nested containers and encoders must be used in the order they are made, as
/// synthesized `Codable` always does: a container can't be written to after a sibling was started.
public struct JSONStreamEncoder: Sendable {
    public struct Options: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Every object's keys in order (by Unicode scalars, as `JSONEncoder`'s `.sortedKeys`),
        /// dictionaries included, so an equal value always gives the same bytes. The output is read
        /// back and rewritten: twice the cost, for stored texts and API answers, not hot paths.
        public static let sortedKeys = Options(rawValue: 1 << 0)
        /// `/` written `\/`, as `JSONEncoder` does unless told otherwise: what the stores wrote
        /// before this encoder, kept so a retried message fingerprints the same across an upgrade.
        public static let escapedSlashes = Options(rawValue: 1 << 1)
        /// Indented, one member a line, keys sorted: for files people read.
        public static let prettyPrinted = Options(rawValue: 1 << 2)
        /// Dates as RFC 3339 text with milliseconds (`2026-11-28T14:09:51.123Z`), as the API
        /// writes them, in place of seconds since 2001.
        public static let rfc3339Dates = Options(rawValue: 1 << 3)
    }

    public var options: Options

    public init(options: Options = []) { self.options = options }

    public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let state = EncodingState(datesAsText: options.contains(.rfc3339Dates))
        if !state.encodeLeaf(value, depth: 0) { try state.encode(value, depth: 0, topLevel: true) }
        state.close(downTo: 0)
        var bytes = state.writer.bytes
        // JSONValue's writer sorts object keys; the text is our own, so it always parses.
        if options.contains(.prettyPrinted) {
            bytes = try JSONParser.parse(bytes).prettyBytes
        } else if options.contains(.sortedKeys) {
            bytes = try JSONParser.parse(bytes).bytes
        }
        // Outside strings JSON has no `/`: every one is inside a string and may be escaped.
        if options.contains(.escapedSlashes), bytes.contains(UInt8(ascii: "/")) {
            bytes = bytes.flatMap { $0 == UInt8(ascii: "/") ? [UInt8(ascii: "\\"), $0] : [$0] }
        }
        return bytes
    }
}

/// What one `encode` call shares between its encoders and containers.
///
/// Containers have no "finished" callback, so they are closed lazily: each knows its level (how many
/// containers enclose it, itself included), and a write at level `n` first closes every container
/// deeper than `n`. The encoder for a slot in a container at level `n` has depth `n`.
private final class EncodingState {
    /// `Options.rfc3339Dates`.
    let datesAsText: Bool

    init(datesAsText: Bool) { self.datesAsText = datesAsText }

    // Every write goes through these, and runtime exclusivity checks on them cost ~10%. Safe: the
    // state lives for one `encode` call on one thread, and no access to them overlaps another.
    @exclusivity(unchecked) var writer = JSONWriter()
    /// The open containers, outermost first: whether each is an object, and which encoder opened it.
    @exclusivity(unchecked) private var containers: [(isObject: Bool, owner: Int)] = []
    /// `path[n - 1]` is the key of the slot being written in the container at level `n`.
    private var path: [any CodingKey] = []
    /// The byte count right after a key (or array slot) handed to a super encoder, which may never
    /// write: if nothing follows before the next write around it, the slot gets `{}` as in JSONEncoder.
    @exclusivity(unchecked) private var slotMark = -1
    private var nextOwner = 0  // Nested containers have no owner encoder: -1.

    func codingPath(_ count: Int) -> [any CodingKey] { Array(path.prefix(count)) }

    func enter(_ key: some CodingKey, level: Int) {
        if path.count >= level { path.removeSubrange((level - 1)...) }
        path.append(key)
    }

    func close(downTo level: Int) {
        while containers.count > level {
            fillSlot()
            if containers.removeLast().isObject { writer.endObject() } else { writer.endArray() }
        }
    }

    private func fillSlot() {
        if slotMark == writer.bytes.count { writer.beginObject(); writer.endObject() }
        slotMark = -1
    }

    /// Before a member or element is written into the container at `level`.
    func beginMember(level: Int) {
        if containers.count > level { close(downTo: level) }
        if slotMark >= 0 { fillSlot() }
    }

    /// Before an encoder at `depth` writes its one value; that value fills any pending slot.
    func beginValue(depth: Int) {
        if containers.count > depth { close(downTo: depth) }
        slotMark = -1
    }

    func markSlot() { slotMark = writer.bytes.count }

    func newEncoder(depth: Int) -> ValueEncoder { defer { nextOwner += 1 }; return ValueEncoder(state: self, depth: depth, owner: nextOwner) }

    /// Opens the container an encoder asks for, or returns to the one it already opened (a value may
    /// ask again, e.g. a subclass after `super.encode(to: encoder)`); JSONEncoder merges those too.
    func container(isObject: Bool, depth: Int, owner: Int) -> Int {
        if containers.count > depth, containers[depth].owner == owner {
            precondition(containers[depth].isObject == isObject, "An encoder asked for both a keyed and an unkeyed container.")
            close(downTo: depth + 1)
        } else {
            beginValue(depth: depth)
            openNested(isObject: isObject, owner: owner)
        }
        return depth + 1
    }

    /// Opens a container in the slot just written (its key or array position is already out).
    func openNested(isObject: Bool, owner: Int = -1) {
        if isObject { writer.beginObject() } else { writer.beginArray() }
        containers.append((isObject, owner))
    }

    func double(_ value: Double, _ codingPath: @autoclosure () -> [any CodingKey]) throws {
        guard value.isFinite else { throw Self.nonFinite(value, codingPath()) }
        writer.double(value)
    }

    func float(_ value: Float, _ codingPath: @autoclosure () -> [any CodingKey]) throws {
        guard value.isFinite else { throw Self.nonFinite(value, codingPath()) }
        // Float's own description is its shortest round-trip form; widening to Double would lengthen it.
        if value == value.rounded(), abs(value) < 1e15 { writer.double(Double(value)) } else { writer.raw(String(value).utf8) }
    }

    /// Writes what `uuidString` would (upper-case 8-4-4-4-12); it formats with `snprintf`, which took a
    /// fifth of this encoder's time.
    private func uuid(_ value: UUID) {
        let hex: StaticString = "0123456789ABCDEF"
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 38) { text in
            var count = 0
            func put(_ byte: UInt8) { text[count] = byte; count += 1 }
            put(UInt8(ascii: "\""))
            withUnsafeBytes(of: value.uuid) { bytes in
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 { put(UInt8(ascii: "-")) }
                    put(hex.utf8Start[Int(byte >> 4)])
                    put(hex.utf8Start[Int(byte & 0xF)])
                }
            }
            put(UInt8(ascii: "\""))
            writer.raw(text)
        }
    }

    func integer(_ value: some FixedWidthInteger) {
        if let value = Int(exactly: value) { writer.int(value) } else { writer.raw(String(value).utf8) }
    }

    private static func nonFinite(_ value: some Any, _ codingPath: [any CodingKey]) -> EncodingError {
        .invalidValue(value, .init(codingPath: codingPath, debugDescription: "Unable to encode \(type(of: value)).\(value) directly in JSON."))
    }

    /// Writes the commonest leaves without making an encoder and a container for them; false for
    /// anything else. Metatype compares, not dynamic casts. Callers skip the coding path too.
    func encodeLeaf<T: Encodable>(_ value: T, depth: Int) -> Bool {
        if let string = exactly(value, String.self) {
            beginValue(depth: depth); writer.string(string)
        } else if let int = exactly(value, Int.self) {
            beginValue(depth: depth); writer.int(int)
        } else if let bool = exactly(value, Bool.self) {
            beginValue(depth: depth); writer.bool(bool)
        } else if datesAsText, let date = exactly(value, Date.self) {
            beginValue(depth: depth); writer.string(date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        } else if let date = exactly(value, Date.self), date.timeIntervalSinceReferenceDate.isFinite {
            beginValue(depth: depth); writer.double(date.timeIntervalSinceReferenceDate)  // As `Date.encode(to:)`.
        } else if let uuid = exactly(value, UUID.self) {
            beginValue(depth: depth); self.uuid(uuid)
        } else if let json = exactly(value, JSONValue.self) {
            beginValue(depth: depth); writer.value(json)  // Written directly, its keys sorted.
        } else {
            return false
        }
        return true
    }

    /// Writes `value` as the one value of the encoder at `depth` (whose key, if any, is already out).
    func encode<T: Encodable>(_ value: T, depth: Int, topLevel: Bool = false) throws {
        // JSONEncoder's default strategies write these three differently from their own `encode(to:)`.
        if let data = exactly(value, Data.self) { beginValue(depth: depth); writer.string(data.base64EncodedString()); return }
        if let url = exactly(value, URL.self) { beginValue(depth: depth); writer.string(url.absoluteString); return }
        if let decimal = exactly(value, Decimal.self) {
            guard decimal.isFinite else { throw Self.nonFinite(decimal, codingPath(depth)) }
            beginValue(depth: depth)
            writer.raw(decimal.description.utf8)
            return
        }
        let start = writer.bytes.count
        try value.encode(to: newEncoder(depth: depth))
        guard writer.bytes.count == start else { return }
        // The value asked for no container and wrote nothing: JSONEncoder writes `{}`, or throws at the top.
        if topLevel {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "Top-level \(T.self) did not encode any values."))
        }
        beginValue(depth: depth)
        writer.beginObject()
        writer.endObject()
    }
}

@inline(__always) private func exactly<T, U>(_ value: T, _: U.Type) -> U? {
    T.self == U.self ? unsafeBitCast(value, to: U.self) : nil
}

private struct ValueEncoder: Encoder {
    let state: EncodingState
    let depth: Int
    let owner: Int

    var codingPath: [any CodingKey] { state.codingPath(depth) }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(KeyedContainer<Key>(state: state, level: state.container(isObject: true, depth: depth, owner: owner)))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        UnkeyedContainer(state: state, level: state.container(isObject: false, depth: depth, owner: owner))
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleValueContainer(state: state, depth: depth) }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let state: EncodingState
    let level: Int

    var codingPath: [any CodingKey] { state.codingPath(level - 1) }

    private func member(_ key: Key) { state.beginMember(level: level); state.writer.key(key.stringValue) }
    private func path(_ key: Key) -> [any CodingKey] { codingPath + [key] }

    func encodeNil(forKey key: Key) { member(key); state.writer.null() }
    func encode(_ value: Bool, forKey key: Key) { member(key); state.writer.bool(value) }
    func encode(_ value: String, forKey key: Key) { member(key); state.writer.string(value) }
    func encode(_ value: Double, forKey key: Key) throws { member(key); try state.double(value, path(key)) }
    func encode(_ value: Float, forKey key: Key) throws { member(key); try state.float(value, path(key)) }
    func encode(_ value: Int, forKey key: Key) { member(key); state.writer.int(value) }
    func encode(_ value: Int8, forKey key: Key) { member(key); state.integer(value) }
    func encode(_ value: Int16, forKey key: Key) { member(key); state.integer(value) }
    func encode(_ value: Int32, forKey key: Key) { member(key); state.integer(value) }
    func encode(_ value: Int64, forKey key: Key) { member(key); state.integer(value) }
    func encode(_ value: UInt, forKey key: Key) { member(key); state.integer(value) }
    func encode(_ value: UInt8, forKey key: Key) { member(key); state.integer(value) }
    func encode(_ value: UInt16, forKey key: Key) { member(key); state.integer(value) }
    func encode(_ value: UInt32, forKey key: Key) { member(key); state.integer(value) }
    func encode(_ value: UInt64, forKey key: Key) { member(key); state.integer(value) }

    func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        member(key)
        guard !state.encodeLeaf(value, depth: level) else { return }
        state.enter(key, level: level)
        try state.encode(value, depth: level)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        member(key)
        state.enter(key, level: level)
        state.openNested(isObject: true)
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(state: state, level: level + 1))
    }

    func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        member(key)
        state.enter(key, level: level)
        state.openNested(isObject: false)
        return UnkeyedContainer(state: state, level: level + 1)
    }

    func superEncoder() -> any Encoder { superEncoder(CodingPathKey.super) }
    func superEncoder(forKey key: Key) -> any Encoder { superEncoder(key) }

    private func superEncoder(_ key: some CodingKey) -> any Encoder {
        state.beginMember(level: level)
        state.writer.key(key.stringValue)
        state.enter(key, level: level)
        state.markSlot()
        return state.newEncoder(depth: level)
    }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let state: EncodingState
    let level: Int
    private(set) var count = 0

    init(state: EncodingState, level: Int) { self.state = state; self.level = level }

    var codingPath: [any CodingKey] { state.codingPath(level - 1) }

    /// Starts the next element; returns its index.
    private mutating func element() -> Int { state.beginMember(level: level); count += 1; return count - 1 }
    private func path(_ index: Int) -> [any CodingKey] { codingPath + [CodingPathKey.index(index)] }

    mutating func encodeNil() { _ = element(); state.writer.null() }
    mutating func encode(_ value: Bool) { _ = element(); state.writer.bool(value) }
    mutating func encode(_ value: String) { _ = element(); state.writer.string(value) }
    mutating func encode(_ value: Double) throws { let index = element(); try state.double(value, path(index)) }
    mutating func encode(_ value: Float) throws { let index = element(); try state.float(value, path(index)) }
    mutating func encode(_ value: Int) { _ = element(); state.writer.int(value) }
    mutating func encode(_ value: Int8) { _ = element(); state.integer(value) }
    mutating func encode(_ value: Int16) { _ = element(); state.integer(value) }
    mutating func encode(_ value: Int32) { _ = element(); state.integer(value) }
    mutating func encode(_ value: Int64) { _ = element(); state.integer(value) }
    mutating func encode(_ value: UInt) { _ = element(); state.integer(value) }
    mutating func encode(_ value: UInt8) { _ = element(); state.integer(value) }
    mutating func encode(_ value: UInt16) { _ = element(); state.integer(value) }
    mutating func encode(_ value: UInt32) { _ = element(); state.integer(value) }
    mutating func encode(_ value: UInt64) { _ = element(); state.integer(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let index = element()
        guard !state.encodeLeaf(value, depth: level) else { return }
        state.enter(CodingPathKey.index(index), level: level)
        try state.encode(value, depth: level)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        state.enter(CodingPathKey.index(element()), level: level)
        state.openNested(isObject: true)
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(state: state, level: level + 1))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        state.enter(CodingPathKey.index(element()), level: level)
        state.openNested(isObject: false)
        return UnkeyedContainer(state: state, level: level + 1)
    }

    mutating func superEncoder() -> any Encoder {
        state.enter(CodingPathKey.index(element()), level: level)
        state.markSlot()
        return state.newEncoder(depth: level)
    }
}

private struct SingleValueContainer: SingleValueEncodingContainer {
    let state: EncodingState
    let depth: Int

    var codingPath: [any CodingKey] { state.codingPath(depth) }

    private func begin() { state.beginValue(depth: depth) }

    func encodeNil() { begin(); state.writer.null() }
    func encode(_ value: Bool) { begin(); state.writer.bool(value) }
    func encode(_ value: String) { begin(); state.writer.string(value) }
    func encode(_ value: Double) throws { begin(); try state.double(value, codingPath) }
    func encode(_ value: Float) throws { begin(); try state.float(value, codingPath) }
    func encode(_ value: Int) { begin(); state.writer.int(value) }
    func encode(_ value: Int8) { begin(); state.integer(value) }
    func encode(_ value: Int16) { begin(); state.integer(value) }
    func encode(_ value: Int32) { begin(); state.integer(value) }
    func encode(_ value: Int64) { begin(); state.integer(value) }
    func encode(_ value: UInt) { begin(); state.integer(value) }
    func encode(_ value: UInt8) { begin(); state.integer(value) }
    func encode(_ value: UInt16) { begin(); state.integer(value) }
    func encode(_ value: UInt32) { begin(); state.integer(value) }
    func encode(_ value: UInt64) { begin(); state.integer(value) }
    func encode<T: Encodable>(_ value: T) throws {
        if !state.encodeLeaf(value, depth: depth) { try state.encode(value, depth: depth) }
    }
}
