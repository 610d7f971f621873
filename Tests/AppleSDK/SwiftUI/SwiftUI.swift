// Stand-in for the part of Apple's SDK that the client SDK's adapters use (scripts/typecheck-apple.sh;
// docs/client-sdk.md, "What the type-check proves"). Declarations only: it is type-checked against,
// never linked or run. Kept to Apple's documented declarations (names, argument labels,
// optionality, isolation, Sendable, availability); where Linux cannot express one, the comment
// beside it says how it differs.
//
// SwiftUI: what an app's entry point and a small screen need (App, Scene, WindowGroup, View, a few
// views, @State, @Environment(\.scenePhase), onChange, task, @UIApplicationDelegateAdaptor).
//   https://developer.apple.com/documentation/swiftui/app
//   https://developer.apple.com/documentation/swiftui/scene
//   https://developer.apple.com/documentation/swiftui/scenebuilder
//   https://developer.apple.com/documentation/swiftui/windowgroup
//   https://developer.apple.com/documentation/swiftui/view
//   https://developer.apple.com/documentation/swiftui/viewbuilder
//   https://developer.apple.com/documentation/swiftui/text
//   https://developer.apple.com/documentation/swiftui/button
//   https://developer.apple.com/documentation/swiftui/list
//   https://developer.apple.com/documentation/swiftui/foreach
//   https://developer.apple.com/documentation/swiftui/navigationstack
//   https://developer.apple.com/documentation/swiftui/state
//   https://developer.apple.com/documentation/swiftui/binding
//   https://developer.apple.com/documentation/swiftui/environment
//   https://developer.apple.com/documentation/swiftui/environmentvalues/scenephase
//   https://developer.apple.com/documentation/swiftui/scenephase
//   https://developer.apple.com/documentation/swiftui/view/onchange(of:initial:_:)
//   https://developer.apple.com/documentation/swiftui/view/task(priority:_:)
//   https://developer.apple.com/documentation/swiftui/uiapplicationdelegateadaptor
//
// Built-in views declare `Body = Never`, as Apple's primitive views do; modifiers return `some View`
// (the stand-in returns the view itself). `@Observable` is the Observation module's (it exists on
// Linux); this stand-in does not re-export it, so a sample that uses it imports Observation.

@_exported import Foundation
import UIKit

// MARK: - View

/// `@MainActor @preconcurrency protocol View`
@MainActor @preconcurrency
public protocol View {
    associatedtype Body: View
    @ViewBuilder @MainActor @preconcurrency var body: Self.Body { get }
}

extension Never: View, Scene {
    public typealias Body = Never
    public var body: Never { return fatalError("stand-in") }
}

/// `@frozen struct EmptyView`
public struct EmptyView {
    public init() {}
    public var body: Never { fatalError("stand-in") }
}

/// `@frozen struct TupleView<T>`
public struct TupleView<T> {
    public var value: T
    public init(_ value: T) { self.value = value }
    public var body: Never { fatalError("stand-in") }
}

/// `@frozen struct _ConditionalContent<TrueContent, FalseContent>`
public struct _ConditionalContent<TrueContent: View, FalseContent: View> {
    public var body: Never { fatalError("stand-in") }
}

/// `@frozen struct AnyView`
public struct AnyView {
    public init<V: View>(_ view: V) {}
    public var body: Never { fatalError("stand-in") }
}

extension Optional: View where Wrapped: View {
    public typealias Body = Never
    public var body: Never { fatalError("stand-in") }
}

/// `@resultBuilder struct ViewBuilder`
@resultBuilder
public struct ViewBuilder {
    public static func buildBlock() -> EmptyView { EmptyView() }
    public static func buildBlock<Content: View>(_ content: Content) -> Content { content }
    @available(iOS 17.0, *)
    public static func buildBlock<each Content: View>(_ content: repeat each Content) -> TupleView<(repeat each Content)> {
        TupleView((repeat each content))
    }
    public static func buildExpression<Content: View>(_ content: Content) -> Content { content }
    public static func buildIf<Content: View>(_ content: Content?) -> Content? { content }
    public static func buildEither<TrueContent: View, FalseContent: View>(
        first: TrueContent
    ) -> _ConditionalContent<TrueContent, FalseContent> { fatalError("stand-in") }
    public static func buildEither<TrueContent: View, FalseContent: View>(
        second: FalseContent
    ) -> _ConditionalContent<TrueContent, FalseContent> { fatalError("stand-in") }
    public static func buildLimitedAvailability<Content: View>(_ content: Content) -> AnyView { AnyView(content) }
}

// MARK: - Text, Button, stacks, lists, navigation

/// `@frozen struct LocalizedStringKey : Equatable, ExpressibleByStringInterpolation, Sendable`
public struct LocalizedStringKey: Equatable, ExpressibleByStringInterpolation, Sendable {
    public init(_ value: String) {}
    public init(stringLiteral value: String) {}
    public init(stringInterpolation: DefaultStringInterpolation) {}
}

/// `@frozen struct Text : Equatable, Sendable`
public struct Text: Equatable, Sendable {
    /// `init(_ key: LocalizedStringKey, tableName: String? = nil, bundle: Bundle? = nil, comment: StaticString? = nil)`
    public init(_ key: LocalizedStringKey, tableName: String? = nil, bundle: Bundle? = nil, comment: StaticString? = nil) {}
    /// `init<S>(_ content: S) where S : StringProtocol`
    @_disfavoredOverload
    public init<S: StringProtocol>(_ content: S) {}
    /// `init(verbatim content: String)`
    public init(verbatim content: String) {}
    public var body: Never { fatalError("stand-in") }
}

/// `@MainActor @preconcurrency struct Button<Label> where Label : View`
@MainActor @preconcurrency
public struct Button<Label: View>: View {
    /// `init(action: @escaping @MainActor () -> Void, @ViewBuilder label: () -> Label)`
    public init(action: @escaping @MainActor () -> Void, @ViewBuilder label: () -> Label) {}
    public var body: Never { fatalError("stand-in") }
}

extension Button where Label == Text {
    /// `init(_ titleKey: LocalizedStringKey, action: @escaping @MainActor () -> Void)`
    public init(_ titleKey: LocalizedStringKey, action: @escaping @MainActor () -> Void) {}
    /// `init<S>(_ title: S, action: @escaping @MainActor () -> Void) where S : StringProtocol`
    @_disfavoredOverload
    public init<S: StringProtocol>(_ title: S, action: @escaping @MainActor () -> Void) {}
}

/// `@frozen struct HorizontalAlignment : Equatable`
public struct HorizontalAlignment: Equatable, Sendable {
    public static let leading = HorizontalAlignment()
    public static let center = HorizontalAlignment()
    public static let trailing = HorizontalAlignment()
}

/// `@frozen struct VStack<Content> where Content : View`
public struct VStack<Content: View> {
    /// `init(alignment: HorizontalAlignment = .center, spacing: CGFloat? = nil, @ViewBuilder content: () -> Content)`
    public init(alignment: HorizontalAlignment = .center, spacing: CGFloat? = nil, @ViewBuilder content: () -> Content) {}
    public var body: Never { fatalError("stand-in") }
}

/// `struct ForEach<Data, ID, Content> where Data : RandomAccessCollection, ID : Hashable` (a View
/// where `Content : View`)
public struct ForEach<Data: RandomAccessCollection, ID: Hashable, Content: View> {
    /// `init(_ data: Data, @ViewBuilder content: @escaping (Data.Element) -> Content)`
    /// (where `ID == Data.Element.ID`, `Data.Element : Identifiable`)
    public init(_ data: Data, @ViewBuilder content: @escaping (Data.Element) -> Content)
    where ID == Data.Element.ID, Data.Element: Identifiable {}
    /// `init(_ data: Data, id: KeyPath<Data.Element, ID>, @ViewBuilder content: @escaping (Data.Element) -> Content)`
    public init(_ data: Data, id: KeyPath<Data.Element, ID>, @ViewBuilder content: @escaping (Data.Element) -> Content) {}
    public var body: Never { fatalError("stand-in") }
}

/// `@MainActor @preconcurrency struct List<SelectionValue, Content> where SelectionValue : Hashable, Content : View`
@MainActor @preconcurrency
public struct List<SelectionValue: Hashable, Content: View>: View {
    public var body: Never { fatalError("stand-in") }
}

extension List where SelectionValue == Never {
    /// `init(@ViewBuilder content: () -> Content)`
    public init(@ViewBuilder content: () -> Content) {}
    /// `init<Data, RowContent>(_ data: Data, @ViewBuilder rowContent: @escaping (Data.Element) -> RowContent)`
    /// (where `Content == ForEach<Data, Data.Element.ID, RowContent>`, `Data.Element : Identifiable`)
    public init<Data: RandomAccessCollection, RowContent: View>(
        _ data: Data, @ViewBuilder rowContent: @escaping (Data.Element) -> RowContent
    ) where Content == ForEach<Data, Data.Element.ID, RowContent>, Data.Element: Identifiable {}
}

/// `struct NavigationPath`
@available(iOS 16.0, *)
public struct NavigationPath {
    public init() {}
}

/// `@MainActor @preconcurrency struct NavigationStack<Data, Root> where Root : View`
@available(iOS 16.0, *)
@MainActor @preconcurrency
public struct NavigationStack<Data, Root: View>: View {
    /// `init(@ViewBuilder root: () -> Root) where Data == NavigationPath`
    public init(@ViewBuilder root: () -> Root) where Data == NavigationPath {}
    public var body: Never { fatalError("stand-in") }
}

// Primitive views and scenes: plain structs (not actor-isolated) that conform in an extension, as
// in Apple's interface.
extension EmptyView: View {}
extension TupleView: View {}
extension _ConditionalContent: View {}
extension AnyView: View {}
extension Text: View {}
extension VStack: View {}
extension ForEach: View {}

// MARK: - Modifiers

extension View {
    /// `nonisolated func task(priority: TaskPriority = .userInitiated,
    /// _ action: @escaping @isolated(any) @Sendable () async -> Void) -> some View`
    @available(iOS 15.0, *)
    nonisolated public func task(
        priority: TaskPriority = .userInitiated, _ action: @escaping @isolated(any) @Sendable () async -> Void
    ) -> some View { self }

    /// `nonisolated func onChange<V>(of value: V, initial: Bool = false, _ action: @escaping () -> Void)
    /// -> some View where V : Equatable`
    @available(iOS 17.0, *)
    nonisolated public func onChange<V: Equatable>(of value: V, initial: Bool = false, _ action: @escaping () -> Void) -> some View {
        self
    }

    /// `nonisolated func onChange<V>(of value: V, initial: Bool = false,
    /// _ action: @escaping (_ oldValue: V, _ newValue: V) -> Void) -> some View where V : Equatable`
    @available(iOS 17.0, *)
    nonisolated public func onChange<V: Equatable>(
        of value: V, initial: Bool = false, _ action: @escaping (_ oldValue: V, _ newValue: V) -> Void
    ) -> some View { self }

    /// `nonisolated func onAppear(perform action: (() -> Void)? = nil) -> some View`
    nonisolated public func onAppear(perform action: (() -> Void)? = nil) -> some View { self }

    /// `nonisolated func navigationTitle<S>(_ title: S) -> some View where S : StringProtocol`
    @_disfavoredOverload
    nonisolated public func navigationTitle<S: StringProtocol>(_ title: S) -> some View { self }

    /// `nonisolated func navigationTitle(_ titleKey: LocalizedStringKey) -> some View`
    nonisolated public func navigationTitle(_ titleKey: LocalizedStringKey) -> some View { self }
}

// MARK: - Scenes and the app

/// `@MainActor @preconcurrency protocol Scene`
@MainActor @preconcurrency
public protocol Scene {
    associatedtype Body: Scene
    @SceneBuilder @MainActor @preconcurrency var body: Self.Body { get }
}

/// What `SceneBuilder` makes of several scenes (Apple's result type is opaque, `some Scene`).
public struct _TupleScene<T> {
    public var value: T
    public init(_ value: T) { self.value = value }
    public var body: Never { fatalError("stand-in") }
}

extension _TupleScene: Scene {}

/// `@resultBuilder struct SceneBuilder`
@resultBuilder
public struct SceneBuilder {
    public static func buildBlock<Content: Scene>(_ content: Content) -> Content { content }
    @available(iOS 17.0, *)
    public static func buildBlock<each Content: Scene>(_ content: repeat each Content) -> _TupleScene<(repeat each Content)> {
        _TupleScene((repeat each content))
    }
    public static func buildExpression<Content: Scene>(_ content: Content) -> Content { content }
}

/// `struct WindowGroup<Content> where Content : View`
public struct WindowGroup<Content: View> {
    /// `init(@ViewBuilder content: () -> Content)`
    public init(@ViewBuilder content: () -> Content) {}
    public var body: Never { fatalError("stand-in") }
}

extension WindowGroup: Scene {}

extension Scene {
    /// `nonisolated func onChange<V>(of value: V, initial: Bool = false,
    /// _ action: @escaping (_ oldValue: V, _ newValue: V) -> Void) -> some Scene where V : Equatable`
    @available(iOS 17.0, *)
    nonisolated public func onChange<V: Equatable>(
        of value: V, initial: Bool = false, _ action: @escaping (_ oldValue: V, _ newValue: V) -> Void
    ) -> some Scene { self }

    /// `nonisolated func onChange<V>(of value: V, initial: Bool = false, _ action: @escaping () -> Void)
    /// -> some Scene where V : Equatable`
    @available(iOS 17.0, *)
    nonisolated public func onChange<V: Equatable>(of value: V, initial: Bool = false, _ action: @escaping () -> Void) -> some Scene {
        self
    }
}

/// `@MainActor @preconcurrency protocol App`
@MainActor @preconcurrency
public protocol App {
    associatedtype Body: Scene
    @SceneBuilder @MainActor @preconcurrency var body: Self.Body { get }
    @MainActor @preconcurrency init()
}

extension App {
    /// `@MainActor @preconcurrency static func main()`: lets `@main` mark the app.
    @MainActor @preconcurrency
    public static func main() { fatalError("stand-in") }
}

// MARK: - State and environment

/// `protocol DynamicProperty`
public protocol DynamicProperty {
    mutating func update()
}

extension DynamicProperty {
    public mutating func update() {}
}

/// `@frozen @propertyWrapper struct State<Value>`
@propertyWrapper
public struct State<Value>: DynamicProperty {
    /// `init(wrappedValue value: Value)`
    public init(wrappedValue value: Value) {}
    /// `init(initialValue value: Value)`
    public init(initialValue value: Value) {}
    /// `init() where Value : ExpressibleByNilLiteral`
    public init() where Value: ExpressibleByNilLiteral {}
    /// `var wrappedValue: Value { get nonmutating set }`
    public var wrappedValue: Value {
        get { fatalError("stand-in") }
        nonmutating set { fatalError("stand-in") }
    }
    /// `var projectedValue: Binding<Value> { get }`
    public var projectedValue: Binding<Value> { fatalError("stand-in") }
}

extension State: Sendable where Value: Sendable {}

/// `@frozen @propertyWrapper @dynamicMemberLookup struct Binding<Value>`
@propertyWrapper @dynamicMemberLookup
public struct Binding<Value> {
    /// `init(get: @escaping () -> Value, set: @escaping (Value) -> Void)`
    public init(get: @escaping () -> Value, set: @escaping (Value) -> Void) {}
    /// `static func constant(_ value: Value) -> Binding<Value>`
    public static func constant(_ value: Value) -> Binding<Value> { fatalError("stand-in") }
    /// `var wrappedValue: Value { get nonmutating set }`
    public var wrappedValue: Value {
        get { fatalError("stand-in") }
        nonmutating set { fatalError("stand-in") }
    }
    /// `var projectedValue: Binding<Value> { get }`
    public var projectedValue: Binding<Value> { self }
    /// `subscript<Subject>(dynamicMember keyPath: WritableKeyPath<Value, Subject>) -> Binding<Subject> { get }`
    public subscript<Subject>(dynamicMember keyPath: WritableKeyPath<Value, Subject>) -> Binding<Subject> {
        fatalError("stand-in")
    }
}

extension Binding: @unchecked Sendable where Value: Sendable {}

/// `enum ScenePhase : Comparable, Hashable, Sendable`
public enum ScenePhase: Comparable, Hashable, Sendable {
    case background
    case inactive
    case active
}

/// `struct EnvironmentValues`
public struct EnvironmentValues {
    public init() {}
    /// `var scenePhase: ScenePhase { get set }`
    public var scenePhase: ScenePhase {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
}

/// `@frozen @propertyWrapper struct Environment<Value>`
@propertyWrapper
public struct Environment<Value>: DynamicProperty {
    /// `init(_ keyPath: KeyPath<EnvironmentValues, Value>)`
    public init(_ keyPath: KeyPath<EnvironmentValues, Value>) {}
    /// `var wrappedValue: Value { get }`
    public var wrappedValue: Value { fatalError("stand-in") }
}

extension Environment: Sendable where Value: Sendable {}

/// `@MainActor @preconcurrency @propertyWrapper struct UIApplicationDelegateAdaptor<DelegateType>
/// where DelegateType : NSObject, DelegateType : UIApplicationDelegate`
@available(iOS 14.0, *)
@MainActor @preconcurrency @propertyWrapper
public struct UIApplicationDelegateAdaptor<DelegateType: NSObject & UIApplicationDelegate>: DynamicProperty {
    /// `init(_ delegateType: DelegateType.Type = DelegateType.self)`
    public init(_ delegateType: DelegateType.Type = DelegateType.self) {}
    /// `var wrappedValue: DelegateType { get }`
    public var wrappedValue: DelegateType { fatalError("stand-in") }
}
