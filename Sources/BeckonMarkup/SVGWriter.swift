/// Builds SVG elements as text, one element or tag a line. Attributes keep the order given and
/// numbers get at most one decimal, so the same drawing always gives the same bytes; all text is
/// escaped here, once.
public struct SVGWriter: Sendable {
    public typealias Attributes = [(String, String)]

    public private(set) var lines: [String] = []
    private let escaper: MarkupEscaper

    /// `.xml` for an SVG document; `.html` for SVG inside an HTML page.
    public init(escaper: MarkupEscaper = .xml) { self.escaper = escaper }

    /// The lines joined by newlines: the body of a document.
    public var text: String { lines.joined(separator: "\n") }

    public mutating func append(_ other: SVGWriter) { lines.append(contentsOf: other.lines) }

    /// Markup that is already SVG (the document's frame, `defs`); never user text.
    public mutating func raw(_ markup: String) { lines.append(markup) }

    /// One element; `content` is its text, `tooltip` a `title` child (a browser shows it on hover).
    public mutating func element(_ name: String, _ attributes: Attributes, content: String? = nil, tooltip: String? = nil) {
        let line = "<" + name + attributeText(attributes)
        if content == nil, tooltip == nil {
            lines.append(line + "/>")
            return
        }
        var body = ""
        if let tooltip { body += "<title>\(escaper.escape(tooltip))</title>" }
        if let content { body += escaper.escape(content) }
        lines.append(line + ">" + body + "</\(name)>")
    }

    /// The start tag of an element whose children follow (`svg`, `g`); `close` ends it.
    public mutating func open(_ name: String, _ attributes: Attributes) {
        lines.append("<" + name + attributeText(attributes) + ">")
    }

    public mutating func close(_ name: String) { lines.append("</\(name)>") }

    public mutating func rect(x: Double, y: Double, width: Double, height: Double, _ style: Attributes, tooltip: String? = nil) {
        let geometry = [("x", x), ("y", y), ("width", max(width, 0)), ("height", max(height, 0))]
        element("rect", geometry.map { ($0.0, Self.number($0.1)) } + style, tooltip: tooltip)
    }

    public mutating func line(x1: Double, y1: Double, x2: Double, y2: Double, _ style: Attributes) {
        let geometry = [("x1", x1), ("y1", y1), ("x2", x2), ("y2", y2)]
        element("line", geometry.map { ($0.0, Self.number($0.1)) } + style)
    }

    public mutating func circle(x: Double, y: Double, radius: Double, _ style: Attributes, tooltip: String? = nil) {
        element("circle", [("cx", Self.number(x)), ("cy", Self.number(y)), ("r", Self.number(radius))] + style, tooltip: tooltip)
    }

    public mutating func polygon(_ points: [(Double, Double)], _ style: Attributes, tooltip: String? = nil) {
        element("polygon", [("points", Self.points(points))] + style, tooltip: tooltip)
    }

    public mutating func polyline(_ points: [(Double, Double)], _ style: Attributes) {
        element("polyline", [("points", Self.points(points)), ("fill", "none")] + style)
    }

    public mutating func path(_ data: String, _ style: Attributes, tooltip: String? = nil) {
        element("path", [("d", data)] + style, tooltip: tooltip)
    }

    public mutating func text(
        _ content: String, x: Double, y: Double, size: Double, _ style: Attributes = [], tooltip: String? = nil
    ) {
        let position = [("x", Self.number(x)), ("y", Self.number(y)), ("font-size", Self.number(size))]
        element("text", position + style, content: content, tooltip: tooltip)
    }

    /// One line of text in differently styled runs (`tspan`s), which flow on without guessing widths.
    public mutating func text(
        runs: [(String, Attributes)], x: Double, y: Double, size: Double, _ style: Attributes = [], tooltip: String? = nil
    ) {
        let position = [("x", Self.number(x)), ("y", Self.number(y)), ("font-size", Self.number(size))]
        var line = "<text" + attributeText(position + style) + ">"
        if let tooltip { line += "<title>\(escaper.escape(tooltip))</title>" }
        for (content, attributes) in runs {
            line += "<tspan" + attributeText(attributes) + ">\(escaper.escape(content))</tspan>"
        }
        lines.append(line + "</text>")
    }

    // MARK: - Text and numbers

    private func attributeText(_ attributes: Attributes) -> String {
        attributes.map { " \($0.0)=\"\(escaper.escape($0.1))\"" }.joined()
    }

    /// A coordinate with at most one decimal (`12`, `12.5`, `-0.5`).
    public static func number(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let tenths = Int((value * 10).rounded())
        let magnitude = abs(tenths)
        let sign = tenths < 0 ? "-" : ""
        return magnitude % 10 == 0 ? "\(sign)\(magnitude / 10)" : "\(sign)\(magnitude / 10).\(magnitude % 10)"
    }

    public static func points(_ points: [(Double, Double)]) -> String {
        points.map { "\(number($0.0)),\(number($0.1))" }.joined(separator: " ")
    }

    /// A sans-serif text's width, estimated: there is no font metrics without a renderer, and a
    /// generous guess only costs some space where labels are packed.
    public static func textWidth(_ text: String, size: Double) -> Double {
        Double(text.count) * size * 0.58
    }

    /// At most `limit` characters, with an ellipsis when cut.
    public static func truncate(_ text: String, to limit: Int) -> String {
        text.count <= limit ? text : String(text.prefix(max(limit - 1, 1))) + "…"
    }
}
