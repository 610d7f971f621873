import BeckonMarkup
import Foundation

/// A small inline SVG line chart: one time axis, one value axis from zero, a line per series.
/// Server-rendered so the status page needs no script, no build step and nothing from elsewhere.
struct SVGLineChart {
    struct Series {
        var name: String
        var color: String
        /// One value per point of the time axis; nil where nothing was measured.
        var values: [Double?]
    }

    var title: String
    /// Labels under the first, middle and last point.
    var axisLabels: (first: String, middle: String, last: String)
    var maximum: Double
    var format: (Double) -> String
    var series: [Series]

    private let width = 520.0, height = 200.0, left = 48.0, right = 12.0, top = 42.0, bottom = 28.0

    /// Coordinates are Swift's `Double` text (`48.0`; full precision on the axis), and the tags
    /// are joined without newlines, like the rest of the page.
    var svg: String {
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        let points = series.map(\.values.count).max() ?? 0
        func x(_ index: Int) -> Double { left + (points <= 1 ? plotWidth : plotWidth * Double(index) / Double(points - 1)) }
        func y(_ value: Double) -> Double { top + plotHeight * (1 - min(value, maximum) / max(maximum, .leastNonzeroMagnitude)) }
        func tenths(_ value: Double) -> String { "\((value * 10).rounded() / 10)" }

        var out = SVGWriter(escaper: .html)
        out.open("svg", [
            ("xmlns", "http://www.w3.org/2000/svg"), ("role", "img"), ("viewBox", "0 0 \(Int(width)) \(Int(height))"),
            ("width", "\(Int(width))"), ("height", "\(Int(height))"), ("aria-label", title),
        ])
        out.element("text", [("x", "\(left)"), ("y", "14"), ("class", "chart-title")], content: title)
        for fraction in [0.0, 0.5, 1.0] {
            let value = maximum * fraction, lineY = y(value)
            out.element("line", [("x1", "\(left)"), ("x2", "\(width - right)"), ("y1", "\(lineY)"), ("y2", "\(lineY)"), ("class", "grid")])
            out.element(
                "text", [("x", "\(left - 6)"), ("y", "\(lineY + 4)"), ("text-anchor", "end"), ("class", "axis")], content: format(value))
        }
        let labels = [(0, "start", axisLabels.first), (max(0, points - 1) / 2, "middle", axisLabels.middle),
                      (max(0, points - 1), "end", axisLabels.last)]
        for (index, anchor, label) in labels {
            out.element("text", [("x", "\(x(index))"), ("y", "\(height - 8)"), ("text-anchor", anchor), ("class", "axis")], content: label)
        }
        for (number, line) in series.enumerated() {
            // The line joins the measured points across empty buckets (nothing measured then is
            // not zero); each measured bucket also gets a dot.
            let run = line.values.enumerated().compactMap { index, value in value.map { (x(index), y($0)) } }
            if !run.isEmpty {
                let path = run.map { "\(tenths($0.0)),\(tenths($0.1))" }.joined(separator: " ")
                out.element("polyline", [
                    ("points", path), ("fill", "none"), ("stroke", line.color), ("stroke-width", "2"), ("class", "series"),
                    ("data-series", line.name),
                ])
                for (px, py) in run {
                    out.element("circle", [("cx", tenths(px)), ("cy", tenths(py)), ("r", "2.5"), ("fill", line.color)])
                }
            }
            // The legend sits under the title, clear of the lines.
            let legendX = left + Double(number) * 130
            out.element("rect", [("x", "\(legendX)"), ("y", "20"), ("width", "10"), ("height", "10"), ("fill", line.color)])
            out.element("text", [("x", "\(legendX + 14)"), ("y", "29"), ("class", "legend")], content: line.name)
        }
        out.close("svg")
        return out.lines.joined()
    }
}
