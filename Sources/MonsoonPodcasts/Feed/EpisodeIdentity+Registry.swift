import FoundationEssentials

extension EpisodeIdentity {
    /// The identities given out in one feed, over all its pages: whether an item repeats an earlier one, and under
    /// which identity an item is kept.
    ///
    /// Items that share a guid but carry different enclosures are different recordings (a publisher re-used a guid):
    /// the later one is kept under its ``recordingIdentity(guid:enclosureURL:)``. The same guid with the same enclosure
    /// (tracking prefixes and volatile parameters aside), or where either has no enclosure, is a duplicate.
    ///
    /// Compact: no strings, only each identity's 128-bit digest and, for an item that took a plain guid, a 64-bit hash
    /// of its normalized enclosure, three words a slot in 64 open-addressed tables (linear probing, at most three
    /// quarters full). Each table doubles on its own, so a million identities take 48 MiB, and 49 at the peak.
    struct Registry {
        private static let shardCount = 64
        /// Per table: `first`, `second` of the identity's digest, then the enclosure's hash (0: none); a slot whose digest
        /// is (0, 0) is empty.
        private var shards = [[UInt64]](repeating: [], count: shardCount)
        private(set) var count = 0
        private var shardCounts = [Int](repeating: 0, count: shardCount)

        /// Nil when the item duplicates an earlier one. `identity` is the item's own.
        mutating func admit(_ identity: String, guid: String?, enclosureURL: URL?) -> String? {
            let key = Self.key(identity)
            guard let earlier = enclosure(of: key) else {
                insert(key, enclosure: guid == identity ? enclosureURL.map(Self.enclosureHash) ?? 0 : 0)
                return identity
            }
            // Only a plain guid can stand for two recordings; enclosures are compared by their normalized hashes.
            guard let guid, guid == identity, let enclosureURL, earlier != 0, earlier != Self.enclosureHash(enclosureURL) else { return nil }
            let recording = recordingIdentity(guid: guid, enclosureURL: enclosureURL)
            let recordingKey = Self.key(recording)
            guard enclosure(of: recordingKey) == nil else { return nil }
            insert(recordingKey, enclosure: 0)
            return recording
        }

        func contains(_ identity: String) -> Bool {
            enclosure(of: Self.key(identity)) != nil
        }

        /// 0 for none; nil when the key was not given out.
        private func enclosure(of key: IdentityHash) -> UInt64? {
            let shard = Self.shard(of: key)
            guard !shards[shard].isEmpty else { return nil }
            return shards[shard].withUnsafeBufferPointer { words in
                let slot = Self.find(key, in: words)
                return words[slot * 3] == 0 && words[slot * 3 + 1] == 0 ? nil : words[slot * 3 + 2]
            }
        }

        private mutating func insert(_ key: IdentityHash, enclosure: UInt64) {
            let shard = Self.shard(of: key)
            if (shardCounts[shard] + 1) * 4 > shards[shard].count / 3 * 3 { grow(shard) }
            shards[shard].withUnsafeMutableBufferPointer { words in
                let slot = Self.find(key, in: UnsafeBufferPointer(words))
                words[slot * 3] = key.first
                words[slot * 3 + 1] = key.second
                words[slot * 3 + 2] = enclosure
            }
            shardCounts[shard] += 1
            count += 1
        }

        /// The digest, never (0, 0), which marks an empty slot.
        private static func key(_ identity: String) -> IdentityHash {
            let key = IdentityHash(identity)
            return key.first == 0 && key.second == 0 ? IdentityHash(first: 0, second: 1) : key
        }

        /// The top bits of the second hash (the slot comes from the first).
        private static func shard(of key: IdentityHash) -> Int {
            Int(truncatingIfNeeded: key.second >> 58)
        }

        /// Never 0, which stands for "none".
        private static func enclosureHash(_ url: URL) -> UInt64 {
            let hash = normalizedEnclosureHash(url)
            return hash == 0 ? 1 : hash
        }

        /// Or the empty slot where it belongs. The table must not be empty.
        private static func find(_ key: IdentityHash, in words: UnsafeBufferPointer<UInt64>) -> Int {
            let mask = words.count / 3 - 1
            var slot = Int(truncatingIfNeeded: key.first) & mask
            while true {
                let first = words[slot * 3], second = words[slot * 3 + 1]
                if (first == key.first && second == key.second) || (first == 0 && second == 0) { return slot }
                slot = (slot + 1) & mask
            }
        }

        /// Twice the slots (16 at first), the entries placed again.
        private mutating func grow(_ shard: Int) {
            let old = shards[shard]
            var slots = [UInt64](repeating: 0, count: max(16, old.count / 3 * 2) * 3)
            slots.withUnsafeMutableBufferPointer { words in
                var index = 0
                while index < old.count {
                    if old[index] != 0 || old[index + 1] != 0 {
                        let slot = Self.find(IdentityHash(first: old[index], second: old[index + 1]), in: UnsafeBufferPointer(words))
                        words[slot * 3] = old[index]
                        words[slot * 3 + 1] = old[index + 1]
                        words[slot * 3 + 2] = old[index + 2]
                    }
                    index += 3
                }
            }
            shards[shard] = slots
        }
    }

    static func normalizedEnclosureHash(_ url: URL) -> UInt64 {
        normalizedEnclosureDigest(url.absoluteString).first
    }

    /// Computed without normalizing when the URL is already in normal form (http(s), lowercase scheme and host, no query,
    /// fragment or tracking prefix: most enclosures): the registry hashes the enclosure of nearly every item.
    static func normalizedEnclosureDigest(_ text: String) -> IdentityHash {
        var text = text
        let digest = text.withUTF8 { bytes -> IdentityHash? in
            isNormalized(bytes) ? IdentityHash(bytes: UnsafeRawBufferPointer(bytes)) : nil
        }
        return digest ?? IdentityHash(normalizedEnclosureURL(text))
    }

    private static func isNormalized(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let rest: Int
        if bytes.starts(with: "https://".utf8) {
            rest = 8
        } else if bytes.starts(with: "http://".utf8) {
            rest = 7
        } else {
            return false
        }
        var inHost = true
        for index in rest..<bytes.count {
            let byte = bytes[index]
            if byte >= 0x80 || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") { return false }
            if byte == UInt8(ascii: "/") { inHost = false }
            if inHost, byte >= UInt8(ascii: "A"), byte <= UInt8(ascii: "Z") { return false }
        }
        let afterScheme = UnsafeBufferPointer(rebasing: bytes[rest...])
        // Most hosts start with a letter no tracking service's does: one compare, not a walk of each prefix.
        guard let first = afterScheme.first.map({ $0 | 0x20 }), trackingPrefixFirstBytes.contains(first) else { return true }
        for (prefix, _) in trackingPrefixes where afterScheme.count >= prefix.utf8.count && prefix.utf8.first == first {
            if prefix.utf8.elementsEqual(afterScheme.prefix(prefix.utf8.count), by: { $0 == ($1 >= 0x41 && $1 <= 0x5A ? $1 | 0x20 : $1) }) {
                return false
            }
        }
        return true
    }

    /// Lowercase.
    private static let trackingPrefixFirstBytes = Set(trackingPrefixes.compactMap { $0.prefix.utf8.first })
}
