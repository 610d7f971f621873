/// The coding-path entries the encoder and decoder make themselves: an array's index, and the
/// `super` key of `superEncoder()` / `superDecoder()`, named as Foundation names them in errors.
enum CodingPathKey: CodingKey {
    case index(Int)
    case `super`

    init?(stringValue: String) { nil }
    init?(intValue: Int) { self = .index(intValue) }

    var stringValue: String {
        switch self {
        case .index(let index): "Index \(index)"
        case .super: "super"
        }
    }

    var intValue: Int? { if case .index(let index) = self { index } else { nil } }
}
