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
}
