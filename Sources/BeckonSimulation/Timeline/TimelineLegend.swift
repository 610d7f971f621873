import BeckonMarkup
import DeviceSimulator

/// The key under the timeline: the state colours used, the push stages and types, the other rows'
/// shapes. Items flow left to right and wrap, one heading per group.
struct TimelineLegend {
    typealias Layout = TimelineLayout

    /// The class of the legend's symbols, apart from the classes of the lanes' shapes.
    static let symbol = "legend-symbol"

    private(set) var svg = SVGWriter()
    private var x = 0.0
    private var y: Double
    private let itemsLeft = 110.0
    private let lineHeight = 18.0

    init(top: Double) { y = top - lineHeight }

    /// The y below the last line.
    var bottom: Double { y + 8 }

    mutating func draw(states: [AppState], pushTypes: [String], hasServer: Bool) {
        heading("app states")
        for state in states {
            item(state.rawValue) { svg, x, mid in
                svg.rect(
                    x: x, y: mid - 5, width: 18, height: 10,
                    [
                        ("class", "swatch"), ("fill", TimelinePalette.fill(state)), ("stroke", TimelinePalette.outline(state)),
                        ("stroke-width", "0.8"),
                    ])
            }
        }
        item("network offline") { svg, x, mid in
            svg.rect(
                x: x, y: mid - 4, width: 18, height: 8,
                [("fill", "url(#\(TimelinePalette.offlineHatchID))"), ("stroke", "#455a64"), ("stroke-width", "0.8")])
        }

        heading("pushes")
        let stages: [(SVGWriter.Stage, String)] = [
            (.sent, "sent"), (.accepted, "accepted by APNs"), (.held(.apns), "held (APNs / iOS)"), (.delivered, "delivered"),
            (.discarded(""), "discarded (why)"), (.rejected(0, ""), "rejected (status)"),
        ]
        for (stage, label) in stages {
            item(label) { svg, x, mid in
                svg.pushMarker(stage, x: x + 9, y: mid, colour: TimelinePalette.push("alert"), className: Self.symbol)
            }
        }
        for type in pushTypes {
            item(type) { svg, x, mid in
                let colour = TimelinePalette.push(type)
                svg.line(x1: x, y1: mid, x2: x + 18, y2: mid, [("stroke", colour), ("stroke-width", "1.5")])
                svg.circle(x: x + 9, y: mid, radius: 3.6, [("fill", colour)])
            }
        }

        heading("other rows")
        for role in ["app", "extension"] {
            item("sync session (\(role))") { svg, x, mid in
                svg.rect(
                    x: x, y: mid - 5, width: 18, height: 10, [("fill", TimelinePalette.sync(role)), ("fill-opacity", "0.85")])
            }
        }
        item("extension run") { svg, x, mid in
            svg.rect(
                x: x, y: mid - 5, width: 18, height: 10,
                [("fill", TimelinePalette.extensionFill), ("stroke", TimelinePalette.extensionStroke), ("stroke-width", "0.8")])
        }
        item("notification shown") { svg, x, mid in
            svg.rect(
                x: x, y: mid - 6, width: 18, height: 12,
                [
                    ("fill", TimelinePalette.notificationFill), ("stroke", TimelinePalette.notificationStroke),
                    ("stroke-width", "0.8"), ("rx", "2"),
                ])
        }
        item("badge") { svg, x, mid in svg.circle(x: x + 9, y: mid, radius: 6, [("fill", TimelinePalette.badgeFill)]) }
        item("message stored (count)") { svg, x, mid in
            svg.line(x1: x + 9, y1: mid - 5, x2: x + 9, y2: mid + 5, [("stroke", Layout.textColour), ("stroke-width", "1.2")])
            svg.polyline(
                [(x, mid + 5), (x + 5, mid + 5), (x + 5, mid), (x + 13, mid), (x + 13, mid - 5), (x + 18, mid - 5)],
                [("stroke", TimelinePalette.storeStroke), ("stroke-width", "1")])
        }
        if hasServer {
            item("message posted") { svg, x, mid in svg.postedMarker(x: x + 9, y: mid, className: Self.symbol) }
        }
        let marks: [(DeviceTimeline.Mark.Style, String)] = [
            (.plain, "launch, completion, call"), (.alarm, "killed, late completion"), (.user, "user action"),
            (.violation, "violation"), (.note, "note"),
        ]
        for (style, label) in marks {
            item(label) { svg, x, mid in svg.eventMarker(style, x: x + 9, y: mid, className: Self.symbol) }
        }
    }

    private mutating func heading(_ text: String) {
        y += lineHeight + 4
        x = itemsLeft
        svg.text(text, x: Layout.margin, y: y + 4, size: Layout.textSize, [("font-weight", "bold"), ("fill", Layout.textColour)])
    }

    /// An 18 px symbol drawn by `symbol` at (x, middle), then its label; wraps to a new line when full.
    private mutating func item(_ label: String, symbol: (inout SVGWriter, Double, Double) -> Void) {
        let width = 18 + 5 + SVGWriter.textWidth(label, size: Layout.labelSize + 1) + 16
        if x + width > Layout.width - Layout.margin, x > itemsLeft {
            y += lineHeight
            x = itemsLeft
        }
        symbol(&svg, x, y)
        svg.text(label, x: x + 23, y: y + 3.5, size: Layout.labelSize + 1, [("fill", Layout.textColour)])
        x += width
    }
}
