import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// An SVG document read back with a real XML parser: what a browser would get, element by element.
final class ParsedSVG: NSObject, XMLParserDelegate {
    struct Element {
        var name: String
        var attributes: [String: String]
        var text = ""
    }

    private(set) var elements: [Element] = []
    private var open: [Int] = []
    private(set) var error: (any Error)?

    /// Nil when the text is not well-formed XML.
    static func parse(_ text: String) -> ParsedSVG? {
        let document = ParsedSVG()
        let parser = XMLParser(data: Data(text.utf8))
        parser.delegate = document
        guard parser.parse() else { return nil }
        return document
    }

    var root: Element? { elements.first }

    /// Elements whose `class` has every one of `classes`.
    func elements(_ name: String, classes: String) -> [Element] {
        let wanted = Set(classes.split(separator: " "))
        return elements.filter {
            $0.name == name && wanted.isSubset(of: Set(($0.attributes["class"] ?? "").split(separator: " ")))
        }
    }

    /// Every `text` element's text, tspans included.
    var texts: [String] { elements.filter { $0.name == "text" }.map(\.text) }

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        elements.append(Element(name: elementName, attributes: attributes))
        open.append(elements.count - 1)
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        let index = open.removeLast()
        // A tspan's text belongs to its text element too; a title's does not (it is a tooltip).
        if elementName == "tspan", let parent = open.last { elements[parent].text += elements[index].text }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        guard let index = open.last else { return }
        elements[index].text += string
    }
}
