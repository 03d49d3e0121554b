/// Feeds parsed values to the `init(from:)` that the compiler writes for each
/// `ParsableArguments` type: each property wrapper's `init(from:)` asks it for the value at the
/// wrapper's coding path, and option groups get a keyed container one level down.
struct ArgumentDecoder: Decoder {
    let values: ParsedValues
    /// Property names from the command to the value being decoded.
    let path: [String]

    var codingPath: [any CodingKey] { path.map(PathKey.init(stringValue:)) }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(KeyedContainer<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw unwrappedProperty()
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw unwrappedProperty()
    }

    /// The parsed value for the wrapper being decoded by `decoder`.
    static func value<Value>(of type: Value.Type, from decoder: any Decoder) throws -> Value {
        guard let decoder = decoder as? ArgumentDecoder else {
            throw ParseError.declarationError("command-line property wrappers can only be decoded by CommandParser.")
        }
        let value = try decoder.values.resolvedValue(at: decoder.path)
        guard let typed = value as? Value else {
            throw ParseError.declarationError(
                "'\(decoder.path.joined(separator: "."))' holds \(Swift.type(of: value)), not \(Value.self).")
        }
        return typed
    }

    fileprivate func child(_ key: some CodingKey) -> ArgumentDecoder {
        ArgumentDecoder(values: values, path: path + [key.stringValue])
    }

    /// A stored property without a wrapper reached the decoder: only wrappers can be filled.
    private func unwrappedProperty() -> ParseError {
        .declarationError(
            "'\(path.joined(separator: "."))' must be declared with @Option, @Flag, @Argument or @OptionGroup.")
    }
}

/// A coding key made from a property name.
private struct PathKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }

    init(stringValue: String) {
        self.stringValue = stringValue
    }

    init?(intValue: Int) {
        nil
    }
}

/// The container `init(from:)` reads each property from. Every key is "present": a property
/// the command line doesn't mention still decodes, to its default.
private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: ArgumentDecoder

    var codingPath: [any CodingKey] { decoder.codingPath }
    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool { true }
    func decodeNil(forKey key: Key) throws -> Bool { false }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try T(from: decoder.child(key))
    }

    // Plain values can't be filled from the command line; these go through `init(from:)`,
    // which reports the property through `singleValueContainer()`.
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try plain(type, key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try plain(type, key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try plain(type, key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try plain(type, key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try plain(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try plain(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try plain(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try plain(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try plain(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try plain(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try plain(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try plain(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try plain(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try plain(type, key) }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type,
        forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try decoder.child(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder.child(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { decoder }
    func superDecoder(forKey key: Key) throws -> any Decoder { decoder.child(key) }

    private func plain<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T {
        try T(from: decoder.child(key))
    }
}
