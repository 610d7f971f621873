import Configuration

extension ConfigReader {
    /// An integer that must be at least 1.
    func positive(_ key: String, default value: Int) throws(BeckonConfigurationError) -> Int {
        let read = int(forKey: ConfigKey(key), default: value)
        guard read >= 1 else { throw .invalid(key: key, "must be at least 1") }
        return read
    }

    /// An integer that may be 0 (which turns its limit off) but not negative.
    func notNegative(_ key: String, default value: Int) throws(BeckonConfigurationError) -> Int {
        let read = int(forKey: ConfigKey(key), default: value)
        guard read >= 0 else { throw .invalid(key: key, "must not be negative (0 disables it)") }
        return read
    }

    /// A number written as an integer (JSON `30`) or with a fraction (`0.5`); nil when absent.
    func number(_ key: String) -> Double? {
        double(forKey: ConfigKey(key)) ?? int(forKey: ConfigKey(key)).map(Double.init)
    }

    /// A `number` that must be positive and finite; `scope` is this reader's place in the
    /// configuration, for the error's key.
    func positiveNumber(_ key: String, default value: Double, scope: String) throws(BeckonConfigurationError) -> Double {
        let read = number(key) ?? value
        guard read > 0, read.isFinite else { throw .invalid(key: "\(scope).\(key)", "must be a positive number") }
        return read
    }
}
