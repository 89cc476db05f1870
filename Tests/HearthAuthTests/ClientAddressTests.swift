import Testing
@testable import HearthAuth

/// The key each client address is counted under by the per-address limits.
@Suite struct ClientAddressTests {
    @Test func ipv4AddressesCountAlone() {
        #expect(ClientAddress.limitKey("203.0.113.9") == "203.0.113.9")
        #expect(ClientAddress.limitKey("203.0.113.10") != ClientAddress.limitKey("203.0.113.9"))
        // Written as an IPv4-mapped IPv6 address, it is the same client.
        #expect(ClientAddress.limitKey("::ffff:203.0.113.9") == "203.0.113.9")
    }

    @Test func ipv6AddressesCountByTheirSlash64() {
        let key = ClientAddress.limitKey("2001:db8:1:2:aaaa:bbbb:cccc:dddd")
        #expect(key == "2001:db8:1:2::/64")
        #expect(ClientAddress.limitKey("2001:db8:1:2::1") == key)
        #expect(ClientAddress.limitKey("2001:DB8:1:2:ffff::") == key)
        #expect(ClientAddress.limitKey("2001:db8:1:3::1") != key)
        #expect(ClientAddress.limitKey("::1") == "0:0:0:0::/64")
    }

    @Test func otherTextCountsAsWritten() {
        #expect(ClientAddress.limitKey("unknown") == "unknown")
        #expect(ClientAddress.limitKey("") == "")
    }
}
