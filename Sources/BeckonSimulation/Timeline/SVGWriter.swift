/// Builds SVG elements as text. Attributes keep the order given and numbers get at most one
/// decimal, so the same drawing always gives the same bytes; all text is escaped here, once.
struct SVGWriter {
    typealias Attributes = [(String, String)]

    private(set) var lines: [String] = []

    var text: String { lines.joined(separator: "\n") }

    mutating func append(_ other: SVGWriter) { lines.append(contentsOf: other.lines) }

    /// Markup that is already SVG (the document's frame, `defs`); never user text.
    mutating func raw(_ markup: String) { lines.append(markup) }

    /// One element; `content` is its text, `tooltip` a `title` child (a browser shows it on hover).
    mutating func element(_ name: String, _ attributes: Attributes, content: String? = nil, tooltip: String? = nil) {
        var line = "<" + name
        for (key, value) in attributes { line += " \(key)=\"\(Self.escape(value))\"" }
        if content == nil, tooltip == nil {
            lines.append(line + "/>")
            return
        }
        line += ">"
        if let tooltip { line += "<title>\(Self.escape(tooltip))</title>" }
        if let content { line += Self.escape(content) }
        lines.append(line + "</\(name)>")
    }

    mutating func openGroup(_ attributes: Attributes) {
        lines.append("<g" + attributes.map { " \($0.0)=\"\(Self.escape($0.1))\"" }.joined() + ">")
    }

    mutating func closeGroup() { lines.append("</g>") }

    mutating func rect(x: Double, y: Double, width: Double, height: Double, _ style: Attributes, tooltip: String? = nil) {
        let geometry = [("x", x), ("y", y), ("width", max(width, 0)), ("height", max(height, 0))]
        element("rect", geometry.map { ($0.0, Self.number($0.1)) } + style, tooltip: tooltip)
    }

    mutating func line(x1: Double, y1: Double, x2: Double, y2: Double, _ style: Attributes) {
        let geometry = [("x1", x1), ("y1", y1), ("x2", x2), ("y2", y2)]
        element("line", geometry.map { ($0.0, Self.number($0.1)) } + style)
    }

    mutating func circle(x: Double, y: Double, radius: Double, _ style: Attributes, tooltip: String? = nil) {
        element("circle", [("cx", Self.number(x)), ("cy", Self.number(y)), ("r", Self.number(radius))] + style, tooltip: tooltip)
    }

    mutating func polygon(_ points: [(Double, Double)], _ style: Attributes, tooltip: String? = nil) {
        element("polygon", [("points", Self.points(points))] + style, tooltip: tooltip)
    }

    mutating func polyline(_ points: [(Double, Double)], _ style: Attributes) {
        element("polyline", [("points", Self.points(points)), ("fill", "none")] + style)
    }

    mutating func path(_ data: String, _ style: Attributes, tooltip: String? = nil) {
        element("path", [("d", data)] + style, tooltip: tooltip)
    }

    mutating func text(
        _ content: String, x: Double, y: Double, size: Double, _ style: Attributes = [], tooltip: String? = nil
    ) {
        let position = [("x", Self.number(x)), ("y", Self.number(y)), ("font-size", Self.number(size))]
        element("text", position + style, content: content, tooltip: tooltip)
    }

    /// One line of text in differently styled runs (`tspan`s), which flow on without guessing widths.
    mutating func text(
        runs: [(String, Attributes)], x: Double, y: Double, size: Double, _ style: Attributes = [], tooltip: String? = nil
    ) {
        var line = "<text x=\"\(Self.number(x))\" y=\"\(Self.number(y))\" font-size=\"\(Self.number(size))\""
        for (key, value) in style { line += " \(key)=\"\(Self.escape(value))\"" }
        line += ">"
        if let tooltip { line += "<title>\(Self.escape(tooltip))</title>" }
        for (content, attributes) in runs {
            line +=
                "<tspan" + attributes.map { " \($0.0)=\"\(Self.escape($0.1))\"" }.joined() + ">\(Self.escape(content))</tspan>"
        }
        lines.append(line + "</text>")
    }

    // MARK: - Text and numbers

    /// Text safe in XML content and in attribute values. Control characters XML 1.0 forbids
    /// become spaces, so odd script text cannot make the document unreadable.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF: out += " "
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// A coordinate with at most one decimal (`12`, `12.5`, `-0.5`).
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let tenths = Int((value * 10).rounded())
        let magnitude = abs(tenths)
        let sign = tenths < 0 ? "-" : ""
        return magnitude % 10 == 0 ? "\(sign)\(magnitude / 10)" : "\(sign)\(magnitude / 10).\(magnitude % 10)"
    }

    static func points(_ points: [(Double, Double)]) -> String {
        points.map { "\(number($0.0)),\(number($0.1))" }.joined(separator: " ")
    }

    /// A sans-serif text's width, estimated: there is no font metrics without a renderer, and a
    /// generous guess only costs some space where labels are packed.
    static func textWidth(_ text: String, size: Double) -> Double {
        Double(text.count) * size * 0.58
    }

    /// At most `limit` characters, with an ellipsis when cut.
    static func truncate(_ text: String, to limit: Int) -> String {
        text.count <= limit ? text : String(text.prefix(max(limit - 1, 1))) + "…"
    }

    /// A message or push id short enough for a label: its last six characters.
    static func shortID(_ id: String) -> String {
        id.count <= 6 ? id : String(id.suffix(6))
    }
}
