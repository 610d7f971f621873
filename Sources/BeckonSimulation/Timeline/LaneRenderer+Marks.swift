import BeckonMarkup

/// The point rows: messages stored on the device or posted by the server, and everything else
/// that happens at one instant (launches, kills, user actions, violations, notes).
extension LaneRenderer {
    /// Label levels a row may stack before labels start to overlap.
    static let maximumLevels = 5

    mutating func storeRow() {
        let size = TimelineLayout.smallSize
        var packer = RowPacker(gap: 3, limit: 3)
        let labels = lane.stored.map { point in
            let x = scale.x(point.time)
            let text = Self.shortID(point.value)
            let width = SVGWriter.textWidth(text, size: size)
            return (point, x, text, packer.place(from: x - width / 2, to: x + width / 2))
        }
        let height = Double(packer.count) * TimelineLayout.storeLabelHeight + 10
        let bottom = y + height - 1

        // The running count as a step line, scaled to this device's total.
        if !lane.stored.isEmpty {
            let total = Double(lane.stored.count)
            let level = { (count: Double) in bottom - count / total * (height - 4) }
            var points = [(scale.x(0), bottom)]
            for (index, point) in lane.stored.enumerated() {
                let x = scale.x(point.time)
                points.append((x, level(Double(index))))
                points.append((x, level(Double(index + 1))))
            }
            points.append((scale.right, level(total)))
            svg.polygon(points + [(scale.right, bottom)], [("fill", TimelinePalette.storeFill), ("stroke", "none")])
            svg.polyline(points, [("class", "store-count"), ("stroke", TimelinePalette.storeStroke), ("stroke-width", "1")])
            svg.text(
                String(lane.stored.count), x: scale.right + 3, y: level(total) + 3, size: size,
                [("fill", TimelinePalette.storeStroke)])
        }
        for (point, x, text, level) in labels {
            svg.line(
                x1: x, y1: bottom - 6, x2: x, y2: bottom,
                [("class", "stored"), ("stroke", TimelineLayout.textColour), ("stroke-width", "1.2")])
            // A pale backing keeps the id readable where the count's line crosses it.
            let baseline = bottom - 8 - Double(level) * TimelineLayout.storeLabelHeight
            let width = SVGWriter.textWidth(text, size: size)
            svg.rect(
                x: x - width / 2 - 1, y: baseline - size + 1, width: width + 2, height: size + 1,
                [("fill", "#ffffff"), ("fill-opacity", "0.8")])
            svg.text(
                text, x: x, y: baseline, size: size,
                [("fill", TimelineLayout.textColour), ("text-anchor", "middle")],
                tooltip: "message \(point.value) stored at \(seconds(point.time))")
        }
        finishRow("stored", height: height)
    }

    mutating func postedRow() {
        let size = TimelineLayout.labelSize
        var packer = RowPacker(gap: 3, limit: Self.maximumLevels)
        let placed = lane.posted.map { point in
            let x = scale.x(point.time)
            let text = Self.shortID(point.value)
            return (point, x, text, packer.place(from: x - 3, to: extent(text, at: x - 3, size: size)))
        }
        let mid = y + 7
        for (point, x, text, level) in placed {
            svg.postedMarker(x: x, y: mid, tooltip: "message \(point.value) posted at \(seconds(point.time))")
            label(text, x: x, markY: mid, level: level, size: size, [("fill", TimelineLayout.textColour)])
        }
        finishRow("messages posted", height: 16 + Double(packer.count) * TimelineLayout.eventLabelHeight)
    }

    mutating func eventRows() {
        let size = TimelineLayout.labelSize
        var packer = RowPacker(gap: 4, limit: Self.maximumLevels)
        let placed = lane.marks.map { mark in
            let text = SVGWriter.truncate(mark.label, to: mark.style == .note ? 40 : 32)
            let x = scale.x(mark.time)
            let weight = mark.style == .violation ? 1.1 : 1
            return (mark, x, text, packer.place(from: x - 3, to: extent(text, at: x - 3, size: size * weight)))
        }
        let mid = y + 7
        for (mark, x, text, level) in placed {
            svg.eventMarker(mark.style, x: x, y: mid, tooltip: "\(mark.detail) at \(seconds(mark.time))")
            label(text, x: x, markY: mid, level: level, size: size, Self.labelStyle(mark.style))
        }
        finishRow("events", height: 16 + Double(packer.count) * TimelineLayout.eventLabelHeight)
    }

    /// A thin dashed red line through the whole lane at each violation, to find it in every row.
    mutating func violationLines() {
        for time in lane.violationTimes {
            let x = scale.x(time)
            svg.line(
                x1: x, y1: top + TimelineLayout.laneHeaderHeight, x2: x, y2: y,
                [
                    ("stroke", TimelineLayout.alarmColour), ("stroke-width", "1"), ("stroke-dasharray", "3,3"),
                    ("stroke-opacity", "0.6"),
                ])
        }
    }

    /// A mark's label on its level under the marker, starting where the marker is.
    private mutating func label(_ text: String, x: Double, markY: Double, level: Int, size: Double, _ style: SVGWriter.Attributes)
    {
        let baseline = markY + 14 + Double(level) * TimelineLayout.eventLabelHeight
        svg.text(text, x: x - 3, y: baseline, size: size, style)
    }

    static func labelStyle(_ style: DeviceTimeline.Mark.Style) -> SVGWriter.Attributes {
        switch style {
        case .plain: [("fill", TimelineLayout.textColour)]
        case .alarm: [("fill", TimelineLayout.alarmColour)]
        case .violation: [("fill", TimelineLayout.alarmColour), ("font-weight", "bold")]
        case .user: [("fill", "#1565c0"), ("font-style", "italic")]
        case .note: [("fill", "#757575"), ("font-style", "italic")]
        }
    }
}
