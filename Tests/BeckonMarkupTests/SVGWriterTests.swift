import BeckonMarkup
import Testing

@Suite struct SVGWriterTests {
    @Test func numbersHaveAtMostOneDecimal() {
        #expect(SVGWriter.number(12) == "12")
        #expect(SVGWriter.number(12.5) == "12.5")
        #expect(SVGWriter.number(12.04) == "12")
        #expect(SVGWriter.number(-0.5) == "-0.5")
        #expect(SVGWriter.number(-0.04) == "0")
        #expect(SVGWriter.number(.nan) == "0")
        #expect(SVGWriter.number(.infinity) == "0")
        #expect(SVGWriter.points([(1, 2.25), (-3, 4)]) == "1,2.3 -3,4")
    }

    @Test func anElementWithoutTextClosesItself() {
        var svg = SVGWriter()
        svg.rect(x: 1, y: 2, width: -5, height: 4.44, [("class", "a b"), ("fill", "#fff")])
        svg.line(x1: 0, y1: 0, x2: 10, y2: 0.25, [])
        #expect(svg.lines == [
            ##"<rect x="1" y="2" width="0" height="4.4" class="a b" fill="#fff"/>"##,
            #"<line x1="0" y1="0" x2="10" y2="0.3"/>"#,
        ])
    }

    @Test func textAndTooltipsAreEscapedOnce() {
        var svg = SVGWriter()
        svg.text("a < b & c", x: 1, y: 2, size: 9, [("data-x", #"say "hi""#)], tooltip: "it's")
        #expect(svg.text
            == #"<text x="1" y="2" font-size="9" data-x="say &quot;hi&quot;"><title>it&apos;s</title>a &lt; b &amp; c</text>"#)
    }

    @Test func runsFlowInOneText() {
        var svg = SVGWriter()
        svg.text(runs: [("FAIL", [("font-weight", "bold")]), ("<x>", [])], x: 0, y: 10, size: 12, [("class", "t")])
        #expect(svg.text
            == #"<text x="0" y="10" font-size="12" class="t"><tspan font-weight="bold">FAIL</tspan><tspan>&lt;x&gt;</tspan></text>"#)
    }

    @Test func openAndCloseWrapWhatIsBetween() {
        var inner = SVGWriter()
        inner.circle(x: 1, y: 1, radius: 2, [])
        var svg = SVGWriter()
        svg.open("g", [("class", "lane")])
        svg.append(inner)
        svg.close("g")
        svg.raw("<defs/>")
        #expect(svg.text == "<g class=\"lane\">\n<circle cx=\"1\" cy=\"1\" r=\"2\"/>\n</g>\n<defs/>")
    }

    /// SVG inside an HTML page is escaped as the page is.
    @Test func theEscaperIsTheCallersChoice() {
        var page = SVGWriter(escaper: .html)
        page.element("text", [("aria-label", "it's")], content: "it's")
        #expect(page.text == "<text aria-label=\"it&#39;s\">it&#39;s</text>")
        var document = SVGWriter()
        document.element("text", [("aria-label", "it's")], content: "it's")
        #expect(document.text == "<text aria-label=\"it&apos;s\">it&apos;s</text>")
    }

    @Test func labelsAreCutWithAnEllipsis() {
        #expect(SVGWriter.truncate("short", to: 10) == "short")
        #expect(SVGWriter.truncate("a longer label", to: 8) == "a longe…")
        #expect(SVGWriter.truncate("abc", to: 1) == "a…")
        #expect(SVGWriter.textWidth("abcd", size: 10) == 4 * 10 * 0.58)
    }
}
