import BeckonMarkup
import DeviceSimulator

/// Draws a report as an SVG timeline: one lane per device (and one for the server when it did
/// something), time running left to right in virtual seconds, each lane's rows labelled on the
/// left, a legend at the bottom. Self-contained SVG 1.1 (no scripts, no external fonts), and the
/// same report always gives the same bytes.
public enum TimelineSVG {
    typealias Layout = TimelineLayout

    public static func render(_ report: SimulationReport) -> String {
        let lanes = lanes(of: report)
        let end = max(report.duration, report.events.map(\.time).max() ?? 0)
        let scale = TimeScale(end: end, left: Layout.plotLeft, width: Layout.plotRight - Layout.plotLeft)

        var content = SVGWriter()
        var y = title(report, into: &content)
        let plotTop = y + Layout.axisHeight
        axis(scale, top: y, labelsAbove: true, into: &content)
        y = plotTop
        var bands: [(top: Double, height: Double)] = []
        for lane in lanes {
            var renderer = LaneRenderer(lane: lane.timeline, scale: scale, top: y + 2)
            if lane.isServer { renderer.drawServer() } else { renderer.drawDevice() }
            content.append(renderer.svg)
            bands.append((y, renderer.height + 4))
            y += renderer.height + 4 + Layout.laneGap
        }
        let plotBottom = y - Layout.laneGap
        axis(scale, top: plotBottom, labelsAbove: false, into: &content)
        y = plotBottom + Layout.axisHeight + 8

        var legend = TimelineLegend(top: y)
        legend.draw(states: usedStates(lanes), pushTypes: usedPushTypes(lanes), hasServer: lanes.contains { $0.isServer })
        content.append(legend.svg)
        let height = (legend.bottom + Layout.margin).rounded(.up)

        var frame = SVGWriter()
        background(scale: scale, bands: bands, gridTop: plotTop, gridBottom: plotBottom, into: &frame)
        return document(report, height: height, body: frame.text + "\n" + content.text)
    }

    struct Lane {
        var timeline: DeviceTimeline
        var isServer: Bool
    }

    /// The server first (what the backend did starts everything), then the devices in the report's
    /// order, then any device that has events but was not listed, so nothing recorded is dropped.
    static func lanes(of report: SimulationReport) -> [Lane] {
        let ordered = report.events.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }
        var byDevice: [String: [TimelineEvent]] = [:]
        var unlisted: [String] = []
        let listed = Set(report.devices)
        for (_, event) in ordered {
            if byDevice[event.device] == nil, !listed.contains(event.device), event.device != TimelineEvent.server {
                unlisted.append(event.device)
            }
            byDevice[event.device, default: []].append(event)
        }
        let end = max(report.duration, report.events.map(\.time).max() ?? 0)
        var lanes: [Lane] = []
        if let events = byDevice[TimelineEvent.server] {
            lanes.append(Lane(timeline: DeviceTimeline(name: TimelineEvent.server, events: events, end: end), isServer: true))
        }
        for name in report.devices + unlisted where name != TimelineEvent.server {
            lanes.append(Lane(timeline: DeviceTimeline(name: name, events: byDevice[name] ?? [], end: end), isServer: false))
        }
        return lanes
    }

    static func usedStates(_ lanes: [Lane]) -> [AppState] {
        let used = Set(lanes.flatMap { $0.timeline.states.map(\.state) })
        return TimelinePalette.stateOrder.filter(used.contains)
    }

    static func usedPushTypes(_ lanes: [Lane]) -> [String] {
        let used = Set(lanes.flatMap { $0.timeline.pushes.map { $0.type ?? "other" } })
        let known = TimelinePalette.pushTypes.filter(used.contains)
        return used.subtracting(known).isEmpty ? known : known + ["other"]
    }

    // MARK: - Title, axes, background

    /// The scenario, its summary and the verdict; then the run's facts and each failed invariant.
    /// Returns the y below it.
    static func title(_ report: SimulationReport, into svg: inout SVGWriter) -> Double {
        let verdict = report.passed ? "PASS" : "FAIL"
        let verdictColour = report.passed ? "#2e7d32" : Layout.alarmColour
        let right = Layout.width - Layout.margin
        svg.rect(x: right - 48, y: 10, width: 48, height: 22, [("fill", verdictColour), ("rx", "4"), ("class", "verdict")])
        svg.text(
            verdict, x: right - 24, y: 26, size: 14, [("fill", "#ffffff"), ("font-weight", "bold"), ("text-anchor", "middle")])

        let room = right - 60 - Layout.margin - SVGWriter.textWidth(report.scenario, size: Layout.titleSize) * 1.1
        let summaryLimit = max(Int(room / SVGWriter.textWidth("x", size: 13)) - 3, 12)
        svg.text(
            runs: [
                (report.scenario, [("font-weight", "bold")]),
                // `dx`, not spaces: SVG drops the spaces at a tspan's edge.
                (
                    "— " + SVGWriter.truncate(report.summary, to: summaryLimit),
                    [("dx", "8"), ("font-size", "13"), ("fill", Layout.mutedColour)]
                ),
            ],
            x: Layout.margin, y: 27, size: Layout.titleSize, [("fill", Layout.textColour)], tooltip: report.summary)

        let failed = report.invariants.filter { !$0.passed }
        let facts = [
            "seed " + String(report.seed, radix: 16).leftPadded(to: 16),
            "time scale ×" + TimeScale.compact(report.timeScale),
            "\(report.devices.count) device\(report.devices.count == 1 ? "" : "s")",
            TimeScale.compact((report.duration * 1000).rounded() / 1000) + " s virtual",
            "invariants: \(report.invariants.count - failed.count) of \(report.invariants.count) passed",
        ]
        let allInvariants = report.invariants.map { "\($0.passed ? "✓" : "✗") \($0.name): \($0.detail)" }.joined(separator: "\n")
        svg.text(
            facts.joined(separator: "  ·  "), x: Layout.margin, y: 48, size: Layout.textSize, [("fill", Layout.mutedColour)],
            tooltip: allInvariants.isEmpty ? nil : allInvariants)
        var y = 48.0
        for invariant in failed.prefix(6) {
            y += 16
            svg.text(
                runs: [
                    ("✗ " + invariant.name, [("font-weight", "bold")]),
                    (SVGWriter.truncate(invariant.detail, to: 150), [("dx", "8")]),
                ],
                x: Layout.margin, y: y, size: Layout.textSize, [("fill", Layout.alarmColour), ("class", "failed-invariant")],
                tooltip: invariant.description)
        }
        if failed.count > 6 {
            y += 16
            svg.text(
                "… and \(failed.count - 6) more failed", x: Layout.margin, y: y, size: Layout.textSize,
                [("fill", Layout.alarmColour)])
        }
        return y + 10
    }

    /// Tick labels in virtual seconds, above the plot at the top and below it at the bottom.
    static func axis(_ scale: TimeScale, top: Double, labelsAbove: Bool, into svg: inout SVGWriter) {
        let lineY = labelsAbove ? top + Layout.axisHeight - 4 : top + 4
        let labelY = labelsAbove ? lineY - 7 : lineY + 14
        svg.line(x1: scale.left, y1: lineY, x2: scale.right, y2: lineY, [("stroke", Layout.mutedColour), ("stroke-width", "1")])
        for tick in scale.ticks {
            let x = scale.x(tick)
            svg.line(x1: x, y1: lineY - 3, x2: x, y2: lineY + 3, [("stroke", Layout.mutedColour), ("stroke-width", "1")])
            svg.text(
                scale.label(tick), x: x, y: labelY, size: Layout.rowLabelSize,
                [("fill", Layout.mutedColour), ("text-anchor", "middle"), ("class", "tick")])
        }
        svg.text("virtual time", x: Layout.rowLabelX, y: labelY, size: Layout.rowLabelSize, [("fill", Layout.mutedColour)])
    }

    /// What goes under everything: the page, each lane's panel, the tick grid.
    static func background(
        scale: TimeScale, bands: [(top: Double, height: Double)], gridTop: Double, gridBottom: Double, into svg: inout SVGWriter
    ) {
        svg.raw(
            """
            <defs><pattern id="\(TimelinePalette.offlineHatchID)" width="5" height="5" patternUnits="userSpaceOnUse" \
            patternTransform="rotate(45)"><rect width="5" height="5" fill="#eceff1"/>\
            <line x1="0" y1="0" x2="0" y2="5" stroke="#455a64" stroke-width="2"/></pattern></defs>
            """)
        svg.element("rect", [("width", "100%"), ("height", "100%"), ("fill", "#ffffff")])
        for (index, band) in bands.enumerated() {
            svg.rect(
                x: 4, y: band.top, width: Layout.width - 8, height: band.height,
                [("fill", index % 2 == 0 ? "#fafafa" : "#f4f6f8"), ("stroke", "#e6e6e6"), ("rx", "4")])
        }
        for tick in scale.ticks {
            let x = scale.x(tick)
            svg.line(x1: x, y1: gridTop, x2: x, y2: gridBottom, [("stroke", Layout.gridColour), ("stroke-width", "1")])
        }
    }

    static func document(_ report: SimulationReport, height: Double, body: String) -> String {
        let width = SVGWriter.number(Layout.width)
        let tall = SVGWriter.number(height)
        let title = MarkupEscaper.xml.escape("\(report.scenario) — \(report.passed ? "PASS" : "FAIL")")
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="\(width)" height="\(tall)" \
            viewBox="0 0 \(width) \(tall)" font-family="sans-serif">
            <title>\(title)</title>
            <desc>\(MarkupEscaper.xml.escape(report.summary))</desc>
            \(body)
            </svg>

            """
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
