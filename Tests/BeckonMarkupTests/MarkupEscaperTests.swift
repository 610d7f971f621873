import BeckonMarkup
import Testing

@Suite struct MarkupEscaperTests {
    @Test func escapesTheFiveCharactersThatMeanMarkup() {
        #expect(MarkupEscaper.xml.escape(#"<a href="x">Tom & Jerry's</a>"#)
            == "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&apos;s&lt;/a&gt;")
    }

    /// HTML 4 has no `&apos;`; a character reference reads the same in every version.
    @Test func htmlWritesTheApostropheAsACharacterReference() {
        #expect(MarkupEscaper.html.escape("it's <b>") == "it&#39;s &lt;b&gt;")
    }

    @Test func keepsWhitespaceAndEveryOtherCharacter() {
        let text = "tab\there\nline\r\nend, ünï 😀 e\u{301}"
        #expect(MarkupEscaper.xml.escape(text) == text)
        #expect(MarkupEscaper.html.escape(text) == text)
    }

    /// XML 1.0 forbids them outright, HTML as parse errors: a reader may reject the whole document.
    @Test func controlCharactersBecomeSpaces() {
        #expect(MarkupEscaper.xml.escape("a\u{0}b\u{1}c\u{7}d\u{1B}e\u{1F}f") == "a b c d e f")
        #expect(MarkupEscaper.html.escape("a\u{FFFE}b\u{FFFF}c") == "a b c")
    }

    /// `<` followed by a combining mark is one `Character` (canonically `≮`): escaping character by
    /// character would let the `<` through.
    @Test func markupFollowedByACombiningMarkIsStillEscaped() {
        #expect(MarkupEscaper.xml.escape("<\u{338}b>") == "&lt;\u{338}b&gt;")
        #expect(MarkupEscaper.xml.escape("&\u{301}amp;") == "&amp;\u{301}amp;")
        #expect(MarkupEscaper.html.escape("\"\u{301} '\u{301}") == "&quot;\u{301} &#39;\u{301}")
    }
}
