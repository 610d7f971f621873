/// Text made safe to print in XML or HTML, as element content or as a quoted attribute value
/// (either quote). Works on Unicode scalars, not characters: a `<` or `&` followed by a combining
/// mark is one `Character` that compares unequal to `<`, and would slip through unescaped.
public struct MarkupEscaper: Sendable {
    /// XML 1.0: SVG documents, XMPP streams.
    public static let xml = MarkupEscaper(apostrophe: "&apos;")
    /// HTML: `'` as a character reference, which every HTML version reads (HTML 4 has no `&apos;`).
    public static let html = MarkupEscaper(apostrophe: "&#39;")

    private let apostrophe: String

    private init(apostrophe: String) { self.apostrophe = apostrophe }

    /// Control characters that XML 1.0 and HTML forbid (all below U+0020 but tab, line feed and
    /// carriage return, and U+FFFE, U+FFFF) become spaces, so odd input cannot make a document
    /// unreadable.
    public func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += apostrophe
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF: out += " "
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
