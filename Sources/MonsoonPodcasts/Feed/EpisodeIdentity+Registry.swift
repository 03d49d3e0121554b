import Foundation

extension EpisodeIdentity {
    /// The identities given out in one feed, over all its pages: says whether an item repeats an
    /// earlier one, and under which identity an item is kept.
    ///
    /// Items that share a guid but carry different enclosures are different recordings (a publisher
    /// re-used a guid): the later one is kept under its ``recordingIdentity(guid:enclosureURL:)``.
    /// Items with the same guid and the same enclosure (tracking prefixes and volatile parameters
    /// aside), or with the same guid where either has no enclosure, are duplicates.
    ///
    /// Compact, so a feed of a million items is deduplicated in a few dozen MiB: it keeps no strings
    /// or URLs, only each identity's 128-bit digest (``IdentityHash``) and, for an item that took a
    /// plain guid, a 64-bit hash of its normalized enclosure, in one flat open-addressed table of
    /// three words a slot (at most three quarters full).
    struct Registry {
        /// `first`, `second` of the identity's digest, then the enclosure's hash (0: none); a slot
        /// whose digest is (0, 0) is empty.
        private var slots: [UInt64] = []
        /// Identities given out.
        private(set) var count = 0

        /// The identity to keep an item under, or nil when it duplicates an earlier one.
        /// `identity` is the item's own (see ``identity(guid:enclosureURL:link:title:dateText:)``).
        mutating func admit(_ identity: String, guid: String?, enclosureURL: URL?) -> String? {
            // Room for one more first: the slot found below stays where it is.
            if (count + 1) * 4 > slots.count / 3 * 3 { grow() }
            let key = Self.key(identity)
            let slot = find(key)
            guard isTaken(slot) else {
                store(key, enclosure: guid == identity ? enclosureURL.map(Self.enclosureHash) ?? 0 : 0, at: slot)
                return identity
            }
            // Only a plain guid can stand for two recordings; enclosures are compared by their
            // normalized hashes, kept for the item that took the plain guid.
            let earlier = slots[slot * 3 + 2]
            guard let guid, guid == identity, let enclosureURL, earlier != 0, earlier != Self.enclosureHash(enclosureURL) else { return nil }
            let recording = recordingIdentity(guid: guid, enclosureURL: enclosureURL)
            let recordingSlot = find(Self.key(recording))
            guard !isTaken(recordingSlot) else { return nil }
            store(Self.key(recording), enclosure: 0, at: recordingSlot)
            return recording
        }

        /// Whether `identity` was given out.
        func contains(_ identity: String) -> Bool {
            contains(Self.key(identity))
        }

        private func contains(_ key: IdentityHash) -> Bool {
            !slots.isEmpty && isTaken(find(key))
        }

        private func isTaken(_ slot: Int) -> Bool {
            slots[slot * 3] != 0 || slots[slot * 3 + 1] != 0
        }

        private mutating func store(_ key: IdentityHash, enclosure: UInt64, at slot: Int) {
            slots[slot * 3] = key.first
            slots[slot * 3 + 1] = key.second
            slots[slot * 3 + 2] = enclosure
            count += 1
        }

        /// The digest, never (0, 0), which marks an empty slot.
        private static func key(_ identity: String) -> IdentityHash {
            let key = IdentityHash(identity)
            return key.first == 0 && key.second == 0 ? IdentityHash(first: 0, second: 1) : key
        }

        /// The normalized enclosure's hash, never 0 (which stands for "none").
        private static func enclosureHash(_ url: URL) -> UInt64 {
            let hash = normalizedEnclosureHash(url)
            return hash == 0 ? 1 : hash
        }

        /// The slot that holds `key`, or the empty slot where it belongs. The table must not be empty.
        private func find(_ key: IdentityHash) -> Int {
            let mask = slots.count / 3 - 1
            var slot = Int(truncatingIfNeeded: key.first) & mask
            return slots.withUnsafeBufferPointer { words in
                while true {
                    let first = words[slot * 3], second = words[slot * 3 + 1]
                    if (first == key.first && second == key.second) || (first == 0 && second == 0) { return slot }
                    slot = (slot + 1) & mask
                }
            }
        }

        /// Twice the slots (1,024 at first), every entry placed again.
        private mutating func grow() {
            let old = slots
            slots = [UInt64](repeating: 0, count: max(1024, old.count / 3 * 2) * 3)
            var index = 0
            while index < old.count {
                if old[index] != 0 || old[index + 1] != 0 {
                    let slot = find(IdentityHash(first: old[index], second: old[index + 1]))
                    slots[slot * 3] = old[index]
                    slots[slot * 3 + 1] = old[index + 1]
                    slots[slot * 3 + 2] = old[index + 2]
                }
                index += 3
            }
        }
    }

    /// A 64-bit hash of `normalizedEnclosureURL`'s result, computed without normalizing
    /// when the URL is already in normal form (an http(s) URL with a lowercase scheme and host, no
    /// query, fragment or tracking prefix: most enclosures), since the registry hashes the enclosure
    /// of nearly every item.
    static func normalizedEnclosureHash(_ url: URL) -> UInt64 {
        var text = url.absoluteString
        let hash = text.withUTF8 { bytes -> UInt64? in
            isNormalized(bytes) ? IdentityHash(bytes: UnsafeRawBufferPointer(bytes)).first : nil
        }
        return hash ?? IdentityHash(normalizedEnclosureURL(text)).first
    }

    /// True when `normalizedEnclosureURL` would return `bytes` unchanged.
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
        for (prefix, _) in trackingPrefixes where afterScheme.count >= prefix.utf8.count {
            if prefix.utf8.elementsEqual(afterScheme.prefix(prefix.utf8.count), by: { $0 == ($1 >= 0x41 && $1 <= 0x5A ? $1 | 0x20 : $1) }) {
                return false
            }
        }
        return true
    }
}
