import FoundationEssentials
import Glibc

/// Which addresses a transfer may reach. A URL a feed gave (an enclosure, a transcript, a later
/// page) must not lead Monsoon into the user's own machine or network and have the answer kept:
/// an admin page on a loopback port, a router's, a cloud's metadata service.
public enum AddressScope: String, Sendable, Equatable {
    /// Any address: a URL the user gave.
    case any
    /// Public addresses only: a connection to any other, after DNS, on every redirect hop and on
    /// a connection reused from another transfer, stops the transfer for good.
    case publicOnly = "public"

    /// Whether `address` (an IPv4 or IPv6 address as text, as curl gives it) is one a
    /// `publicOnly` transfer may reach: not loopback, private (RFC 1918, unique local),
    /// link-local, shared (RFC 6598), unspecified, multicast or broadcast, nor an IPv6 form of
    /// one of those IPv4 addresses (mapped, or NAT64's well-known prefix). Text that is no
    /// address is no public one.
    static func isPublic(_ address: String) -> Bool {
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 {
            return isPublic(v4: UInt32(bigEndian: v4.s_addr))
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, address, &v6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        let mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
        let nat64 = bytes[0..<12].elementsEqual([0, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0])
        if mapped || nat64 {
            // ::ffff:a.b.c.d and 64:ff9b::a.b.c.d reach an IPv4 address: that one decides.
            return isPublic(v4: bytes[12..<16].reduce(0) { $0 << 8 | UInt32($1) })
        }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) { return false }   // :: and ::1
        if bytes[0] & 0xFE == 0xFC { return false }                 // fc00::/7, unique local
        if bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80 { return false }   // fe80::/10, link-local
        if bytes[0] == 0xFE && bytes[1] & 0xC0 == 0xC0 { return false }   // fec0::/10, site-local (deprecated)
        if bytes[0] == 0xFF { return false }                        // multicast
        return true
    }

    private static func isPublic(v4 address: UInt32) -> Bool {
        func within(_ network: UInt32, _ bits: UInt32) -> Bool { address >> (32 - bits) == network >> (32 - bits) }
        return !(within(0x0000_0000, 8) || within(0x0A00_0000, 8) || within(0x6440_0000, 10) || within(0x7F00_0000, 8)
                 || within(0xA9FE_0000, 16) || within(0xAC10_0000, 12) || within(0xC0A8_0000, 16) || within(0xE000_0000, 4)
                 || within(0xF000_0000, 4))
    }

    /// Whether `host` (a name or an address literal) is on the user's own machine or network:
    /// any of the addresses it resolves to is not public. A feed there may point at its
    /// neighbours: its URLs keep `any`. A name that does not resolve is none.
    public static func isPrivate(host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(bare, nil, &hints, &list) == 0 else { return false }
        defer { freeaddrinfo(list) }
        var node = list
        while let entry = node?.pointee {
            node = entry.ai_next
            guard let address = entry.ai_addr else { continue }
            var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            guard getnameinfo(address, entry.ai_addrlen, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 else { continue }
            if !isPublic(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)) { return true }
        }
        return false
    }
}
