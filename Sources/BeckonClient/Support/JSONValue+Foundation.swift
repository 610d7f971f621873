import BeckonJSON
import Foundation

extension JSONValue {
    /// A notification's `userInfo` (or PushKit's `dictionaryPayload`) as JSON: what iOS hands
    /// the app is the push's JSON, decoded by Foundation. Nil if it is not JSON.
    public init?(userInfo: [AnyHashable: Any]) {
        let dictionary = Dictionary(uniqueKeysWithValues: userInfo.compactMap { key, value in
            (key as? String).map { ($0, value) }
        })
        guard JSONSerialization.isValidJSONObject(dictionary),
            let data = try? JSONSerialization.data(withJSONObject: dictionary),
            let value = try? JSONParser.parse(Array(data))
        else { return nil }
        self = value
    }

    /// As Foundation objects, for `userInfo`.
    public var foundationObject: Any? {
        try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
    }
}
