/// How HTTP header values are taken apart on every request, without Foundation: its
/// `trimmingCharacters` goes through NSString, and Unicode lower-casing costs more than these
/// ASCII tokens need (1.6% of a node's time in the ingest benchmark, for one header a post).
extension Substring {
    /// Without HTTP's optional whitespace (spaces and tabs) at either end.
    func trimmingOptionalWhitespace() -> Substring {
        let isSpace = { (character: Character) in character == " " || character == "\t" }
        var trimmed = drop(while: isSpace)
        while let last = trimmed.last, isSpace(last) { trimmed = trimmed.dropLast() }
        return trimmed
    }

    /// With ASCII's capital letters lowered and every other byte kept: for the tokens HTTP
    /// compares without regard to case (an auth scheme, a media type).
    func lowercasedASCII() -> String {
        String(decoding: utf8.lazy.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}
