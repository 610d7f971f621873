import BeckonMarkup

/// The badge and notification rows: what the user sees on the lock screen.
extension LaneRenderer {
    mutating func badgeRow() {
        let height = TimelineLayout.badgeRowHeight
        var packer = RowPacker(gap: 1, limit: 2)
        for badge in lane.badges {
            let x = scale.x(badge.time)
            let text = String(badge.count)
            let radius = max(6, SVGWriter.textWidth(text, size: TimelineLayout.smallSize) / 2 + 3)
            let row = packer.place(from: x - radius, to: x + radius)
            let mid = y + height / 2 + Double(row) * height
            svg.circle(
                x: x, y: mid, radius: radius,
                [("class", "badge"), ("fill", badge.count == 0 ? "#bdbdbd" : TimelinePalette.badgeFill)],
                tooltip: "badge \(badge.count) at \(seconds(badge.time))")
            svg.text(
                text, x: x, y: mid + 2.8, size: TimelineLayout.smallSize,
                [("fill", "#ffffff"), ("font-weight", "bold"), ("text-anchor", "middle")])
        }
        finishRow("badge", height: Double(packer.count) * height)
    }

    mutating func notificationRows() {
        var packer = RowPacker(gap: 6, limit: 16)
        let size = TimelineLayout.labelSize
        let placed = lane.notifications.map { note in
            let x1 = scale.x(note.start)
            let x2 = max(scale.x(note.end), x1 + 2)
            let text = SVGWriter.truncate(note.text, to: 24)
            // The why goes after the bar, or after the text when a short bar's text runs past it.
            let whyX = max(x2 + 3, extent(text, at: x1 + 3, size: size) + 4)
            var right = max(x2, whyX)
            if let why = note.why { right = extent(why, at: whyX, size: TimelineLayout.smallSize) }
            return (note, x1, x2, text, whyX, packer.place(from: x1, to: right))
        }
        let height = TimelineLayout.notificationRowHeight
        for (note, x1, x2, text, whyX, row) in placed {
            let top = y + Double(row) * height + 2
            let messages = note.messages.isEmpty ? "" : " [messages \(note.messages.joined(separator: ", "))]"
            svg.rect(
                x: x1, y: top, width: x2 - x1, height: height - 4,
                [
                    ("class", "notification"), ("fill", TimelinePalette.notificationFill),
                    ("stroke", TimelinePalette.notificationStroke), ("stroke-width", "0.8"), ("rx", "2"),
                ],
                tooltip: "\(note.identifier) \(span(note.start, note.end)): \(note.text)\(messages)")
            // The text starts inside the bar and may run past a short one; it stays on this sub-row.
            svg.text(text, x: x1 + 3, y: top + height / 2 + 1.2, size: size, [("fill", TimelineLayout.textColour)])
            if let why = note.why {
                svg.text(
                    why, x: whyX, y: top + height / 2 + 1, size: TimelineLayout.smallSize,
                    [("fill", TimelineLayout.mutedColour), ("font-style", "italic")])
            }
        }
        finishRow("notifications", height: Double(packer.count) * height)
    }
}
