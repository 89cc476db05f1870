import Testing

@testable import HearthEngine
@testable import HearthServer

/// The counting behind the server's connection caps: per peer address, in all, and per client
/// a trusted proxy forwards for.
@Suite("Connection counts")
struct ConnectionCountsTests {
    @Test func anAddressGetsItsShareAndOthersTheirs() {
        var counts = ConnectionCounts(maxConnections: nil, maxPerAddress: 2)
        #expect(counts.openConnection(from: "198.51.100.1") == nil)
        #expect(counts.openConnection(from: "198.51.100.1") == nil)
        #expect(counts.openConnection(from: "198.51.100.1") == .addressFull)
        #expect(counts.openConnection(from: "198.51.100.2") == nil)
        counts.closeConnection(from: "198.51.100.1")
        #expect(counts.openConnection(from: "198.51.100.1") == nil)
        #expect(counts.open == 3)
        counts.closeConnection(from: "198.51.100.1")
        counts.closeConnection(from: "198.51.100.1")
        // An address with nothing open leaves no entry behind.
        #expect(counts.byAddress == ["198.51.100.2": 1])
    }

    @Test func theServerCapCountsEveryoneProxiesIncluded() {
        var counts = ConnectionCounts(maxConnections: 3, maxPerAddress: 1)
        #expect(counts.openConnection(from: nil) == nil)  // a trusted proxy
        #expect(counts.openConnection(from: nil) == nil)  // and again: no per-address cap
        #expect(counts.openConnection(from: "198.51.100.1") == nil)
        #expect(counts.openConnection(from: "198.51.100.2") == .serverFull)
        #expect(counts.openConnection(from: nil) == .serverFull)
        counts.closeConnection(from: nil)
        #expect(counts.openConnection(from: "198.51.100.2") == nil)
        #expect(counts.open == 3)
    }

    @Test func forwardedRequestsAreCappedPerClient() {
        var counts = ConnectionCounts(maxConnections: 1, maxPerAddress: 2)
        #expect(counts.startForwarded(for: "203.0.113.5") == nil)
        #expect(counts.startForwarded(for: "203.0.113.5") == nil)
        #expect(counts.startForwarded(for: "203.0.113.5") == .addressFull)
        #expect(counts.startForwarded(for: "203.0.113.6") == nil)
        counts.endForwarded(for: "203.0.113.5")
        #expect(counts.startForwarded(for: "203.0.113.5") == nil)
        // Requests are not connections: the server's cap is not theirs.
        #expect(counts.open == 0)
    }

    @Test func noCapsCountWithoutRefusing() {
        var counts = ConnectionCounts(maxConnections: nil, maxPerAddress: nil)
        for _ in 0..<1_000 { #expect(counts.openConnection(from: "198.51.100.1") == nil) }
        #expect(counts.open == 1_000)
    }

    @Test func theAutomaticCapLeavesDescriptorsInReserve() {
        #expect(ConnectionLimits.automaticMaxConnections(descriptorLimit: 1_024) == 896)
        #expect(ConnectionLimits.automaticMaxConnections(descriptorLimit: 20_000) == 18_000)
        #expect(ConnectionLimits.automaticMaxConnections(descriptorLimit: 65_536) == 58_983)
        // A tiny limit keeps half for connections.
        #expect(ConnectionLimits.automaticMaxConnections(descriptorLimit: 200) == 100)
        var limits = ConnectionLimits()
        limits.maxConnections = 42
        #expect(limits.resolvedMaxConnections() == 42)
        if let descriptors = ConnectionLimits.descriptorLimit() {
            #expect(ConnectionLimits().resolvedMaxConnections() == ConnectionLimits.automaticMaxConnections(descriptorLimit: descriptors))
        }
    }

    @Test func aLeaseGivesItsPlaceBackOnce() {
        final class Counter: @unchecked Sendable { var value = 0 }
        let counter = Counter()
        var lease: ForwardedLease? = ForwardedLease { counter.value += 1 }
        lease?.release()
        lease?.release()
        lease = nil
        #expect(counter.value == 1)
        // Dropped without a release (a response never written): given back all the same.
        lease = ForwardedLease { counter.value += 1 }
        lease = nil
        #expect(counter.value == 2)
    }
}
