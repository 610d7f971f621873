extension Substring {
    /// Without HTTP's optional whitespace (spaces and tabs) at either end. Not Foundation's
    /// `trimmingCharacters`, which goes through NSString: header values are parsed on every
    /// request.
    func trimmingOptionalWhitespace() -> Substring {
        let isSpace = { (character: Character) in character == " " || character == "\t" }
        var trimmed = drop(while: isSpace)
        while let last = trimmed.last, isSpace(last) { trimmed = trimmed.dropLast() }
        return trimmed
    }
}
