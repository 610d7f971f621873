import BeckonMarkup

/// The pushes row: one track per push, its stages as markers joined by a line.
extension LaneRenderer {
    /// Stages closer than this are spread apart, so sent → accepted → held in one instant still
    /// reads as a sequence; the tooltips keep the exact times.
    static let stageSpacing = 8.0

    private struct PlacedPush {
        var push: DeviceTimeline.PushTrack
        var xs: [Double]
        var row: Int
    }

    mutating func pushRows() {
        var packer = RowPacker(gap: 6, limit: 12)
        var placed: [PlacedPush] = []
        for push in lane.pushes.sorted(by: { ($0.stages.first?.time ?? 0) < ($1.stages.first?.time ?? 0) }) {
            var xs: [Double] = []
            for stage in push.stages {
                let x = scale.x(stage.time)
                xs.append(xs.last.map { max(x, $0 + Self.stageSpacing) } ?? x)
            }
            guard let first = xs.first, let last = xs.last else { continue }
            var right = max(last + 5, extent(Self.title(push), at: first - 3, size: TimelineLayout.smallSize))
            for (index, stage) in push.stages.enumerated() {
                if let label = Self.stageLabel(stage.stage) {
                    right = max(right, extent(label, at: xs[index] - 4, size: TimelineLayout.smallSize))
                }
            }
            placed.append(PlacedPush(push: push, xs: xs, row: packer.place(from: first - 5, to: right)))
        }

        let height = TimelineLayout.pushRowHeight
        for item in placed {
            let mid = y + Double(item.row) * height + 15
            let colour = TimelinePalette.push(item.push.type)
            if let first = item.xs.first, let last = item.xs.last, last > first {
                svg.line(
                    x1: first, y1: mid, x2: last, y2: mid, [("stroke", colour), ("stroke-width", "1"), ("stroke-opacity", "0.5")])
            }
            svg.text(
                Self.title(item.push), x: item.xs[0] - 3, y: mid - 7, size: TimelineLayout.smallSize,
                [("fill", colour), ("class", "push-reason")])
            for (index, stage) in item.push.stages.enumerated() {
                let x = item.xs[index]
                svg.pushMarker(stage.stage, x: x, y: mid, colour: colour, tooltip: tooltip(item.push, stage))
                if let label = Self.stageLabel(stage.stage) {
                    let rejected = if case .rejected = stage.stage { true } else { false }
                    svg.text(
                        label, x: x - 4, y: mid + 13, size: TimelineLayout.smallSize,
                        [("fill", rejected ? TimelineLayout.alarmColour : TimelineLayout.mutedColour)])
                }
            }
        }
        finishRow("pushes", height: Double(packer.count) * height)
    }

    /// Written once above the push: why it was sent, else its type.
    static func title(_ push: DeviceTimeline.PushTrack) -> String {
        SVGWriter.truncate(push.reason ?? push.type ?? Self.shortID(push.id), to: 28)
    }

    /// The small text under a stage's marker, for the stages that say who or why.
    static func stageLabel(_ stage: DeviceTimeline.PushTrack.Stage) -> String? {
        switch stage {
        case .sent, .accepted, .delivered: nil
        case .held(.apns): "APNs"
        case .held(.ios): "iOS"
        case .discarded(let why): SVGWriter.truncate(why, to: 18)
        case .rejected(let status, let reason): SVGWriter.truncate("\(status) \(reason)", to: 24)
        }
    }

    private func tooltip(_ push: DeviceTimeline.PushTrack, _ stage: (time: Double, stage: DeviceTimeline.PushTrack.Stage))
        -> String
    {
        let what: String =
            switch stage.stage {
            case .sent: "sent"
            case .accepted: "accepted by APNs"
            case .held(.apns): "held by APNs"
            case .held(.ios): "held by iOS"
            case .delivered: "delivered"
            case .discarded(let why): "discarded: \(why)"
            case .rejected(let status, let reason): "rejected \(status) \(reason)"
            }
        var about = [push.type, push.priority.map { "priority \($0)" }, push.reason].compactMap { $0 }.joined(separator: ", ")
        if !about.isEmpty { about = " (\(about))" }
        return "push \(push.id) \(what) at \(seconds(stage.time))\(about)"
    }
}
