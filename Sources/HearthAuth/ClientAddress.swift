/// How a client's address is counted by the per-address limits.
public enum ClientAddress {
    /// The key `address` is counted under: an IPv4 address as it is (also when written as an
    /// IPv4-mapped IPv6 address), an IPv6 address by its /64 network, since one subscriber is
    /// given a whole /64 and could otherwise use a fresh address for every request; anything
    /// else (not an IP address) as written.
    public static func limitKey(_ address: String) -> String {
        if let bytes = IPAddress.v4(address) { return bytes.map(String.init).joined(separator: ".") }
        guard let bytes = IPAddress.v6(address) else { return address }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            return bytes[12...].map(String.init).joined(separator: ".")
        }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }
}
