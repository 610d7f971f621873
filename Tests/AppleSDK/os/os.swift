// Stand-in for the part of Apple's SDK that the client SDK's adapters use (scripts/typecheck-apple.sh;
// docs/client-sdk.md, "What the type-check proves"). Declarations only: it is type-checked against,
// never linked or run. Kept to Apple's documented declarations (names, argument labels,
// optionality, isolation, Sendable, availability); where Linux cannot express one, the comment
// beside it says how it differs.
//
// os.
//   https://developer.apple.com/documentation/os/os_proc_available_memory()

/// `func os_proc_available_memory() -> Int` (C: `size_t os_proc_available_memory(void)`)
@available(iOS 13.0, tvOS 13.0, watchOS 6.0, *)
@available(macOS, unavailable)
public func os_proc_available_memory() -> Int {
    fatalError("stand-in")
}
