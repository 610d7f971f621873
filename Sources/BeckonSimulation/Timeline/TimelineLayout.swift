/// The timeline's fixed geometry, in pixels: one place to change the drawing's proportions.
enum TimelineLayout {
    static let width = 1200.0
    static let margin = 12.0
    /// Left of the plot: lane names and row labels.
    static let plotLeft = 180.0
    /// Right of the plot stays free for the labels of what happens at the very end.
    static let plotRight = 1130.0
    /// Where row labels start (indented under the lane's name).
    static let rowLabelX = 24.0

    static let titleSize = 16.0
    static let textSize = 11.0
    static let rowLabelSize = 10.0
    static let labelSize = 9.0
    static let smallSize = 8.0

    static let axisHeight = 24.0
    static let laneHeaderHeight = 20.0
    static let laneGap = 8.0
    static let stateHeight = 18.0
    static let networkHeight = 10.0
    static let syncRowHeight = 14.0
    static let pushRowHeight = 32.0
    static let extensionRowHeight = 15.0
    static let badgeRowHeight = 16.0
    static let notificationRowHeight = 17.0
    static let storeLabelHeight = 10.0
    static let eventLabelHeight = 11.0

    static let textColour = "#212121"
    static let mutedColour = "#616161"
    static let gridColour = "#e0e0e0"
    static let separatorColour = "#eeeeee"
    static let alarmColour = "#c62828"
}
