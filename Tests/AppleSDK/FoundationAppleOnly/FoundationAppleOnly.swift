// Stand-in for the part of Apple's SDK that the client SDK's adapters use (scripts/typecheck-apple.sh;
// docs/client-sdk.md, "What the type-check proves"). Declarations only: it is type-checked against,
// never linked or run. Kept to Apple's documented declarations (names, argument labels,
// optionality, isolation, Sendable, availability); where Linux cannot express one, the comment
// beside it says how it differs.
//
// This module: the members of Apple's Foundation (and of CoreFoundation, which Foundation
// re-exports on Apple platforms) that swift-corelibs-foundation lacks. On Apple platforms they need
// no import, so the check imports this module implicitly (`-import-module FoundationAppleOnly`).
//   https://developer.apple.com/documentation/foundation/filemanager/containerurl(forsecurityapplicationgroupidentifier:)
//   https://developer.apple.com/documentation/foundation/nsfilecoordinator
//   https://developer.apple.com/documentation/foundation/nsfilecoordinator/coordinate(writingitemat:options:error:byaccessor:)
//   https://developer.apple.com/documentation/foundation/urlresourcevalues/fileprotection
//   https://developer.apple.com/documentation/foundation/processinfo/performexpiringactivity(withreason:using:)
//   https://developer.apple.com/documentation/corefoundation/cfnotificationcenter
//   https://developer.apple.com/documentation/corefoundation/cfnotificationcenteraddobserver(_:_:_:_:_:_:)
//   https://developer.apple.com/documentation/corefoundation/cfnotificationcallback
// `FileProtectionType` and `FileAttributeKey.protectionKey` exist in swift-corelibs-foundation
// already (with Apple's names) and are not redeclared.

@_exported import Foundation

// URLSession and its WebSocket task are in Foundation on Apple platforms, in FoundationNetworking
// on Linux.
#if canImport(FoundationNetworking)
@_exported import FoundationNetworking
#endif

// MARK: - CoreFoundation types

/// Apple: a CoreFoundation class, toll-free bridged with `NSString` (`"name" as CFString`). Here an
/// alias of `NSString`, so the same `as` conversions type-check.
public typealias CFString = NSString
/// Apple: a CoreFoundation class, toll-free bridged with `NSDictionary`.
public typealias CFDictionary = NSDictionary
/// Apple: `typealias CFTypeRef = AnyObject`.
public typealias CFTypeRef = AnyObject
/// Apple: `typealias CFIndex = Int`.
public typealias CFIndex = Int

/// Apple: `typealias NSErrorPointer = AutoreleasingUnsafeMutablePointer<NSError?>?`, a type that
/// exists only with Objective-C interoperability. Passing `&error` (an `NSError?` variable)
/// type-checks the same way with this pointer type.
public typealias NSErrorPointer = UnsafeMutablePointer<NSError?>?

// MARK: - App group containers

extension FileManager {
    /// `func containerURL(forSecurityApplicationGroupIdentifier groupIdentifier: String) -> URL?`
    @available(iOS 7.0, macOS 10.8, *)
    public func containerURL(forSecurityApplicationGroupIdentifier groupIdentifier: String) -> URL? {
        fatalError("stand-in")
    }
}

// MARK: - File coordination

/// `protocol NSFilePresenter : NSObjectProtocol` (the members the SDK could need; all others are
/// optional in Apple's protocol).
public protocol NSFilePresenter: NSObjectProtocol {
    var presentedItemURL: URL? { get }
    var presentedItemOperationQueue: OperationQueue { get }
}

/// `class NSFileCoordinator : NSObject`
@available(iOS 5.0, macOS 10.7, *)
open class NSFileCoordinator: NSObject {
    /// `init(filePresenter filePresenterOrNil: (any NSFilePresenter)?)`
    public init(filePresenter filePresenterOrNil: (any NSFilePresenter)?) {
        fatalError("stand-in")
    }

    public struct ReadingOptions: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        public static let withoutChanges = ReadingOptions(rawValue: 1 << 0)
        public static let resolvesSymbolicLink = ReadingOptions(rawValue: 1 << 1)
        public static let immediatelyAvailableMetadataOnly = ReadingOptions(rawValue: 1 << 2)
        public static let forUploading = ReadingOptions(rawValue: 1 << 3)
    }

    public struct WritingOptions: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        public static let forDeleting = WritingOptions(rawValue: 1 << 0)
        public static let forMoving = WritingOptions(rawValue: 1 << 1)
        public static let forMerging = WritingOptions(rawValue: 1 << 2)
        public static let forReplacing = WritingOptions(rawValue: 1 << 3)
        public static let contentIndependentMetadataOnly = WritingOptions(rawValue: 1 << 4)
    }

    /// `func coordinate(readingItemAt url: URL, options: NSFileCoordinator.ReadingOptions = [],
    /// error outError: NSErrorPointer, byAccessor reader: (URL) -> Void)`
    open func coordinate(
        readingItemAt url: URL, options: NSFileCoordinator.ReadingOptions = [], error outError: NSErrorPointer,
        byAccessor reader: (URL) -> Void
    ) {
        fatalError("stand-in")
    }

    /// `func coordinate(writingItemAt url: URL, options: NSFileCoordinator.WritingOptions = [],
    /// error outError: NSErrorPointer, byAccessor writer: (URL) -> Void)`
    open func coordinate(
        writingItemAt url: URL, options: NSFileCoordinator.WritingOptions = [], error outError: NSErrorPointer,
        byAccessor writer: (URL) -> Void
    ) {
        fatalError("stand-in")
    }
}

// MARK: - Data protection of URLs (`FileProtectionType` is in swift-corelibs-foundation)

/// `struct URLFileProtection : Hashable, Equatable, RawRepresentable, @unchecked Sendable`
@available(iOS 9.0, *)
public struct URLFileProtection: Hashable, RawRepresentable, @unchecked Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let none = URLFileProtection(rawValue: "NSURLFileProtectionNone")
    public static let complete = URLFileProtection(rawValue: "NSURLFileProtectionComplete")
    public static let completeUnlessOpen = URLFileProtection(rawValue: "NSURLFileProtectionCompleteUnlessOpen")
    public static let completeUntilFirstUserAuthentication = URLFileProtection(
        rawValue: "NSURLFileProtectionCompleteUntilFirstUserAuthentication")
}

extension URLResourceKey {
    /// `static let fileProtectionKey: URLResourceKey`
    @available(iOS 9.0, *)
    public static let fileProtectionKey = URLResourceKey(rawValue: "NSURLFileProtectionKey")
}

extension URLResourceValues {
    /// `var fileProtection: URLFileProtection? { get }`
    @available(iOS 9.0, *)
    public var fileProtection: URLFileProtection? { fatalError("stand-in") }
}

// MARK: - Background time in extensions

extension ProcessInfo {
    /// `func performExpiringActivity(withReason reason: String, using block: @escaping @Sendable (Bool) -> Void)`
    @available(iOS 8.2, *)
    public func performExpiringActivity(withReason reason: String, using block: @escaping @Sendable (Bool) -> Void) {
        fatalError("stand-in")
    }
}

// MARK: - The Darwin notify centre (CoreFoundation)

/// `class CFNotificationCenter`
public final class CFNotificationCenter {
    private init() {}
}

/// `struct CFNotificationName : Hashable, Equatable, RawRepresentable, @unchecked Sendable`
public struct CFNotificationName: Hashable, RawRepresentable, @unchecked Sendable {
    public var rawValue: CFString
    public init(_ rawValue: CFString) { self.rawValue = rawValue }
    public init(rawValue: CFString) { self.rawValue = rawValue }
}

/// `enum CFNotificationSuspensionBehavior : CFIndex, @unchecked Sendable`
public enum CFNotificationSuspensionBehavior: CFIndex, @unchecked Sendable {
    case drop = 1
    case coalesce = 2
    case hold = 3
    case deliverImmediately = 4
}

/// Apple: `typealias CFNotificationCallback = @convention(c) (CFNotificationCenter?,
/// UnsafeMutableRawPointer?, CFNotificationName?, UnsafeRawPointer?, CFDictionary?) -> Void`.
/// Differs: on Linux a CoreFoundation object cannot appear in a C function type, so the centre,
/// the name and the user info are opaque pointers here. The C convention is kept: a callback that
/// captures context (`self`, a local) is rejected, as on Apple platforms. A callback that reads the
/// centre, the name or the user info is not checked by this stand-in.
public typealias CFNotificationCallback = @convention(c) (
    OpaquePointer?, UnsafeMutableRawPointer?, OpaquePointer?, UnsafeRawPointer?, OpaquePointer?
) -> Void

/// `func CFNotificationCenterGetDarwinNotifyCenter() -> CFNotificationCenter!`
public func CFNotificationCenterGetDarwinNotifyCenter() -> CFNotificationCenter! {
    fatalError("stand-in")
}

/// `func CFNotificationCenterPostNotification(_ center: CFNotificationCenter!, _ name: CFNotificationName!,
/// _ object: UnsafeRawPointer!, _ userInfo: CFDictionary!, _ deliverImmediately: Bool)`
public func CFNotificationCenterPostNotification(
    _ center: CFNotificationCenter!, _ name: CFNotificationName!, _ object: UnsafeRawPointer!,
    _ userInfo: CFDictionary!, _ deliverImmediately: Bool
) {
    fatalError("stand-in")
}

/// `func CFNotificationCenterAddObserver(_ center: CFNotificationCenter!, _ observer: UnsafeRawPointer!,
/// _ callBack: CFNotificationCallback!, _ name: CFString!, _ object: UnsafeRawPointer!,
/// _ suspensionBehavior: CFNotificationSuspensionBehavior)`
public func CFNotificationCenterAddObserver(
    _ center: CFNotificationCenter!, _ observer: UnsafeRawPointer!, _ callBack: CFNotificationCallback!,
    _ name: CFString!, _ object: UnsafeRawPointer!, _ suspensionBehavior: CFNotificationSuspensionBehavior
) {
    fatalError("stand-in")
}

/// `func CFNotificationCenterRemoveObserver(_ center: CFNotificationCenter!, _ observer: UnsafeRawPointer!,
/// _ name: CFNotificationName!, _ object: UnsafeRawPointer!)`
public func CFNotificationCenterRemoveObserver(
    _ center: CFNotificationCenter!, _ observer: UnsafeRawPointer!, _ name: CFNotificationName!,
    _ object: UnsafeRawPointer!
) {
    fatalError("stand-in")
}

/// `func CFNotificationCenterRemoveEveryObserver(_ center: CFNotificationCenter!, _ observer: UnsafeRawPointer!)`
public func CFNotificationCenterRemoveEveryObserver(_ center: CFNotificationCenter!, _ observer: UnsafeRawPointer!) {
    fatalError("stand-in")
}
