// Stand-in for the part of Apple's SDK that the client SDK's adapters use (scripts/typecheck-apple.sh;
// docs/client-sdk.md, "What the type-check proves"). Declarations only: it is type-checked against,
// never linked or run. Kept to Apple's documented declarations (names, argument labels,
// optionality, isolation, Sendable, availability); where Linux cannot express one, the comment
// beside it says how it differs.
//
// Network (a Swift module in Apple's SDK).
//   https://developer.apple.com/documentation/network/nwpathmonitor
//   https://developer.apple.com/documentation/network/nwpathmonitor/pathupdatehandler
//   https://developer.apple.com/documentation/network/nwpathmonitor/start(queue:)
//   https://developer.apple.com/documentation/network/nwpath
//   https://developer.apple.com/documentation/network/nwpath/status-swift.enum
//   https://developer.apple.com/documentation/network/nwinterface/interfacetype

@_exported import Dispatch

/// `final class NWPathMonitor` (Sendable in the concurrency-annotated SDK; not shown on the page)
@available(iOS 12.0, *)
public final class NWPathMonitor: @unchecked Sendable {
    /// `init()`
    public init() {}
    /// `init(requiredInterfaceType: NWInterface.InterfaceType)`
    public init(requiredInterfaceType: NWInterface.InterfaceType) {}
    /// `init(prohibitedInterfaceTypes: [NWInterface.InterfaceType])`
    @available(iOS 14.0, *)
    public init(prohibitedInterfaceTypes: [NWInterface.InterfaceType]) {}

    /// `@preconcurrency final var pathUpdateHandler: (@Sendable (NWPath) -> Void)? { get set }`
    @preconcurrency
    public final var pathUpdateHandler: (@Sendable (_ newPath: NWPath) -> Void)? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }

    /// `final var currentPath: NWPath { get }`
    public final var currentPath: NWPath { fatalError("stand-in") }
    /// `final var queue: DispatchQueue? { get }`
    public final var queue: DispatchQueue? { fatalError("stand-in") }

    /// `final func start(queue: DispatchQueue)`
    public final func start(queue: DispatchQueue) { fatalError("stand-in") }
    /// `final func cancel()`
    public final func cancel() { fatalError("stand-in") }
}

/// `struct NWPath : Equatable, CustomDebugStringConvertible, Sendable`
@available(iOS 12.0, *)
public struct NWPath: Equatable, CustomDebugStringConvertible, Sendable {
    /// `enum Status : Equatable, Hashable, Sendable`
    public enum Status: Equatable, Hashable, Sendable {
        case satisfied
        case unsatisfied
        case requiresConnection
    }

    /// `let status: NWPath.Status`
    public let status: NWPath.Status
    /// `let isExpensive: Bool`
    public let isExpensive: Bool
    /// `let isConstrained: Bool`
    @available(iOS 13.0, *)
    public let isConstrained: Bool
    /// `let availableInterfaces: [NWInterface]`
    public let availableInterfaces: [NWInterface]

    /// `func usesInterfaceType(_ type: NWInterface.InterfaceType) -> Bool`
    public func usesInterfaceType(_ type: NWInterface.InterfaceType) -> Bool { fatalError("stand-in") }

    public var debugDescription: String { fatalError("stand-in") }

    public static func == (lhs: NWPath, rhs: NWPath) -> Bool { fatalError("stand-in") }
}

/// `struct NWInterface : Hashable, CustomDebugStringConvertible, Sendable`
@available(iOS 12.0, *)
public struct NWInterface: Hashable, CustomDebugStringConvertible, Sendable {
    /// `enum InterfaceType : Hashable, Sendable`
    public enum InterfaceType: Hashable, Sendable {
        case other
        case wifi
        case cellular
        case wiredEthernet
        case loopback
    }

    /// `let type: NWInterface.InterfaceType`
    public let type: NWInterface.InterfaceType
    /// `let name: String`
    public let name: String
    /// `let index: Int`
    public let index: Int

    public var debugDescription: String { name }
}
