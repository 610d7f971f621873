import DeviceSimulator

/// The timeline's colours: one per app state, push type and row, shared by drawing and legend.
enum TimelinePalette {
    /// States in the legend's order: from most to least alive.
    static let stateOrder: [AppState] = [
        .foreground, .inactive, .launching, .background, .suspended, .notRunning, .killedByUser, .notLaunchedSinceReboot,
    ]

    static func fill(_ state: AppState) -> String {
        switch state {
        case .foreground: "#43a047"
        case .inactive: "#a5d6a7"
        case .background: "#fb8c00"
        case .launching: "#fdd835"
        case .suspended: "#9e9e9e"
        case .notRunning: "#ffffff"
        case .killedByUser: "#8e1b1b"
        case .notLaunchedSinceReboot: "#7b1fa2"
        }
    }

    /// Only white fills need an outline to be seen.
    static func outline(_ state: AppState) -> String {
        state == .notRunning ? "#757575" : "none"
    }

    /// Text drawn on the state's colour.
    static func ink(_ state: AppState) -> String {
        switch state {
        case .foreground, .background, .killedByUser, .notLaunchedSinceReboot, .suspended: "#ffffff"
        case .inactive, .launching, .notRunning: "#212121"
        }
    }

    static let pushTypes = ["background", "alert", "voip"]

    static func push(_ type: String?) -> String {
        switch type {
        case "background": "#1565c0"
        case "alert": "#000000"
        case "voip": "#d32f2f"
        default: "#757575"
        }
    }

    static func sync(_ role: String) -> String {
        switch role {
        case "app": "#00897b"
        case "extension": "#5e35b1"
        default: "#546e7a"
        }
    }

    static let offlineHatchID = "offline-hatch"
    static let extensionFill = "#d1c4e9"
    static let extensionStroke = "#5e35b1"
    static let notificationFill = "#e3f2fd"
    static let notificationStroke = "#1e88e5"
    static let badgeFill = "#e53935"
    static let storeFill = "#fff3e0"
    static let storeStroke = "#ef6c00"
    static let serverMarker = "#37474f"
}
