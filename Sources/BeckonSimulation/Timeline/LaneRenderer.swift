import BeckonMarkup

/// Draws one lane (a device, or the server) from the top down, row by row, into its own writer;
/// rows that stack grow as tall as they need, so the lane's height is known only once drawn.
struct LaneRenderer {
    typealias Layout = TimelineLayout

    let lane: DeviceTimeline
    let scale: TimeScale
    let top: Double
    var svg = SVGWriter()
    /// The top of the next row.
    var y: Double

    init(lane: DeviceTimeline, scale: TimeScale, top: Double) {
        self.lane = lane
        self.scale = scale
        self.top = top
        y = top
    }

    var height: Double { y - top }

    /// A message or push id short enough for a label: its last six characters.
    static func shortID(_ id: String) -> String {
        id.count <= 6 ? id : String(id.suffix(6))
    }

    /// Every row, always, so that lanes line up and read the same way.
    mutating func drawDevice() {
        header()
        stateRow()
        networkRow()
        syncRows()
        pushRows()
        extensionRows()
        badgeRow()
        notificationRows()
        storeRow()
        eventRows()
        violationLines()
    }

    mutating func drawServer() {
        header()
        postedRow()
        if !lane.marks.isEmpty { eventRows() }
    }

    // MARK: - Shared pieces

    mutating func header() {
        svg.text(
            SVGWriter.truncate(lane.name, to: 22), x: Layout.margin, y: y + 14, size: 12,
            [("font-weight", "bold"), ("fill", Layout.textColour), ("class", "lane-name")], tooltip: lane.name)
        y += Layout.laneHeaderHeight
    }

    /// The row's label on the left and a faint line under it; then moves `y` past the row.
    mutating func finishRow(_ label: String, height: Double) {
        svg.text(
            label, x: Layout.rowLabelX, y: y + min(height, 20) / 2 + 3.5, size: Layout.rowLabelSize,
            [("fill", Layout.mutedColour)])
        y += height
        svg.line(
            x1: Layout.rowLabelX, y1: y, x2: scale.right, y2: y, [("stroke", Layout.separatorColour), ("stroke-width", "1")])
    }

    func seconds(_ time: Double) -> String { TimeScale.fixed(time, decimals: 3) + "s" }

    func span(_ start: Double, _ end: Double) -> String { "\(seconds(start))–\(seconds(end))" }

    /// A label's extent in pixels, from `x`.
    func extent(_ text: String, at x: Double, size: Double = Layout.labelSize) -> Double {
        x + SVGWriter.textWidth(text, size: size)
    }

    // MARK: - App state, network, sync, extension

    mutating func stateRow() {
        let height = Layout.stateHeight
        for span in lane.states {
            let x1 = scale.x(span.start)
            let x2 = scale.x(span.end)
            let name = span.state.rawValue
            svg.rect(
                x: x1, y: y + 2, width: x2 - x1, height: height - 4,
                [
                    ("class", "state \(name)"), ("fill", TimelinePalette.fill(span.state)),
                    ("stroke", TimelinePalette.outline(span.state)), ("stroke-width", "0.8"),
                ],
                tooltip: "\(name) \(self.span(span.start, span.end))")
            if x2 - x1 > SVGWriter.textWidth(name, size: Layout.labelSize) + 6 {
                svg.text(
                    name, x: x1 + 3, y: y + height / 2 + 3.2, size: Layout.labelSize, [("fill", TimelinePalette.ink(span.state))])
            }
        }
        finishRow("app state", height: height)
    }

    mutating func networkRow() {
        let height = Layout.networkHeight
        let mid = y + height / 2
        svg.line(x1: scale.left, y1: mid, x2: scale.right, y2: mid, [("stroke", "#cfd8dc"), ("stroke-width", "2")])
        for span in lane.offline {
            let x1 = scale.x(span.start)
            svg.rect(
                x: x1, y: y + 1, width: max(scale.x(span.end) - x1, 1), height: height - 2,
                [
                    ("class", "offline"), ("fill", "url(#\(TimelinePalette.offlineHatchID))"), ("stroke", "#455a64"),
                    ("stroke-width", "0.8"),
                ],
                tooltip: "offline \(self.span(span.start, span.end))")
        }
        finishRow("network", height: height)
    }

    mutating func syncRows() {
        for role in lane.roles {
            let height = Layout.syncRowHeight
            let colour = TimelinePalette.sync(role)
            let sessions = lane.sessions.filter { $0.role == role }
            for (index, session) in sessions.enumerated() {
                let x1 = scale.x(session.start)
                let x2 = max(scale.x(session.end), x1 + 1)
                let ending = session.code.map { "closed \($0)" } ?? (session.closed ? "dropped" : "still connected")
                svg.rect(
                    x: x1, y: y + 2, width: x2 - x1, height: height - 4,
                    [("class", "sync \(role)"), ("fill", colour), ("fill-opacity", "0.85")],
                    tooltip: "\(role) session \(self.span(session.start, session.end)), \(ending)")
                // The close code only where it fits before the next session; the tooltip always has it.
                let label = session.code.map(String.init) ?? "drop"
                let room = index + 1 < sessions.count ? scale.x(sessions[index + 1].start) : scale.right + 40
                if session.closed, extent(label, at: x2 + 2, size: Layout.smallSize) + 2 <= room {
                    svg.text(label, x: x2 + 2, y: y + height / 2 + 3, size: Layout.smallSize, [("fill", Layout.mutedColour)])
                }
            }
            finishRow("sync \(role)", height: height)
        }
    }

    mutating func extensionRows() {
        var packer = RowPacker(limit: 8)
        let runs = lane.extensionRuns.map { run in
            let x1 = scale.x(run.start)
            let x2 = max(scale.x(run.end), x1 + 2)
            let row = packer.place(from: x1, to: extent(run.outcome ?? "", at: x2 + 3))
            return (run, x1, x2, row)
        }
        let height = Layout.extensionRowHeight
        for (run, x1, x2, row) in runs {
            let top = y + Double(row) * height
            svg.rect(
                x: x1, y: top + 2, width: x2 - x1, height: height - 4,
                [
                    ("class", "extension"), ("fill", TimelinePalette.extensionFill), ("stroke", TimelinePalette.extensionStroke),
                    ("stroke-width", "0.8"),
                ],
                tooltip: "extension for push \(run.push) \(span(run.start, run.end)): \(run.outcome ?? "still running")")
            if let outcome = run.outcome {
                svg.text(
                    outcome, x: x2 + 3, y: top + height / 2 + 3, size: Layout.labelSize,
                    [("fill", TimelinePalette.extensionStroke)])
            }
        }
        finishRow("extension", height: Double(packer.count) * height)
    }
}
