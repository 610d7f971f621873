extension [MessageReceipt] {
    /// One receipt per message, device and kind, the earliest: what a store keeps of a batch
    /// (a statement cannot insert one key twice, and a device may report a thing twice).
    var distinctEarliest: [MessageReceipt] {
        var earliest: [String: MessageReceipt] = [:]
        var order: [String] = []
        for receipt in self {
            let key = "\(receipt.device.appID)\u{0}\(receipt.device.deviceID)\u{0}\(receipt.messageID)\u{0}\(receipt.kind.rawValue)"
            if let known = earliest[key] {
                if receipt.at < known.at { earliest[key] = receipt }
            } else {
                earliest[key] = receipt
                order.append(key)
            }
        }
        return order.map { earliest[$0]! }
    }
}
