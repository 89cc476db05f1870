import Foundation
import HearthCore
@testable import HearthStore
import HearthTesting
import Testing

/// Push IDs and server values come from the injected clock and random source.
@Suite("Push IDs and server values")
struct PushIDAndServerValueTests {
    static let alphabet = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz")

    /// Decodes a run of push-ID characters as a base-64 number.
    static func decode(_ text: Substring) -> UInt128? {
        var value: UInt128 = 0
        for character in text {
            guard let digit = alphabet.firstIndex(of: character) else { return nil }
            value = value * 64 + UInt128(digit)
        }
        return value
    }

    /// Pushes `count` values, advancing the clock by one millisecond every third push, and
    /// returns the IDs with the clock reading each was made at.
    static func pushes(seed: UInt64, count: Int = 30) async throws -> [(id: String, time: Int64)] {
        let fixture = try StoreFixture(seed: seed)
        defer { fixture.remove() }
        let database = try fixture.open()
        var result: [(id: String, time: Int64)] = []
        for index in 0..<count {
            if index % 3 == 0 { fixture.clock.advance(by: 1) }
            let committed = try await database.push(at: try path("/list"), value: try parsed(#"{"i":\#(index)}"#))
            let id = try #require(committed.pushID)
            #expect(committed.write == .set(try path("/list/\(id)"), try node(#"{"i":\#(index)}"#)))
            #expect(database.value(at: try path("/list/\(id)/i")) == .int(Int64(index)))
            result.append((id, fixture.clock.now))
        }
        return result
    }

    @Test func pushIDsAreDeterministicForASeedAndClock() async throws {
        let first = try await Self.pushes(seed: 7)
        let second = try await Self.pushes(seed: 7)
        let other = try await Self.pushes(seed: 8)
        #expect(first.map(\.id) == second.map(\.id))
        #expect(first.map(\.id) != other.map(\.id))
        // Same clock, so the time part is shared even across seeds.
        #expect(first.map { $0.id.prefix(8) } == other.map { $0.id.prefix(8) })
    }

    @Test func pushIDsEncodeTheClockAndIncrease() async throws {
        let pushes = try await Self.pushes(seed: 42)
        for push in pushes {
            #expect(push.id.count == 20)
            #expect(push.id.allSatisfy { Self.alphabet.contains($0) })
            #expect(Self.decode(push.id.prefix(8)) == UInt128(push.time), "time part of \(push.id)")
        }
        for (previous, next) in zip(pushes, pushes.dropFirst()) {
            #expect(previous.id < next.id, "\(previous.id) then \(next.id)")
            #expect(Array(previous.id.utf8).lexicographicallyPrecedes(Array(next.id.utf8)))
            if previous.time == next.time {
                // Within one millisecond the random part counts up by one.
                let before = try #require(Self.decode(previous.id.suffix(12)))
                let after = try #require(Self.decode(next.id.suffix(12)))
                #expect(after == before + 1)
            }
        }
    }

    @Test func pushIDsKeepIncreasingWhenTheClockStepsBack() async throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let database = try fixture.open()
        let first = try await database.push(at: .root, value: try parsed("1")).pushID!
        fixture.clock.advance(by: -60_000)
        let second = try await database.push(at: .root, value: try parsed("2")).pushID!
        #expect(first < second)
        #expect(first.prefix(8) == second.prefix(8))
    }

    @Test func serverValuesUseTheInjectedClock() async throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        var database: Database? = try fixture.open()
        fixture.clock.set(1_234_567_890_123)
        let committed = try await database!.write(set("/stamp", #"{"at":{".sv":"timestamp"},"n":{".sv":{"increment":2}}}"#))
        // The logged write holds the resolved values, not the placeholders.
        #expect(committed.write == .set(try path("/stamp"), try node(#"{"at":1234567890123,"n":2}"#)))
        #expect(database!.value(at: try path("/stamp/at")) == .int(1_234_567_890_123))

        fixture.clock.advance(by: 5_000)
        try await database!.write(update("/stamp", [("n", #"{".sv":{"increment":2.5}}"#), ("later", #"{".sv":"timestamp"}"#)]))
        try await database!.write(set("/stamp/.priority", #"{".sv":"timestamp"}"#))
        #expect(database!.value(at: try path("/stamp")) == (try node(
            #"{"at":1234567890123,"n":4.5,"later":1234567895123,".priority":1234567895123}"#
        )))

        // Placeholders inside an object that carries a priority are resolved as well.
        fixture.clock.set(1_700_000_000_999)
        try await database!.write(set("/nested", #"{"p":{".priority":1,"t":{".sv":"timestamp"}}}"#))
        #expect(database!.value(at: try path("/nested/p/t")) == .int(1_700_000_000_999))
        #expect(database!.value(at: try path("/nested/p/.priority")) == .double(1))

        // Replay from the log gives the values resolved at write time, not at reopen time.
        let expected = database!.current.state.root
        database = nil
        fixture.clock.set(9_999_999_999_999)
        #expect(try fixture.open().current.state.root == expected)
    }

    @Test func incrementRules() async throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let database = try fixture.open()
        let increment = { (delta: String) in #"{".sv":{"increment":\#(delta)}}"# }
        try await database.write(set("/missing", increment("3")))
        #expect(database.value(at: try path("/missing")) == .int(3))
        try await database.write(set("/text", #""abc""#))
        try await database.write(set("/text", increment("1")))
        #expect(database.value(at: try path("/text")) == .int(1), "a non-numeric value is replaced by the delta")
        try await database.write(set("/big", "9223372036854775807"))
        try await database.write(set("/big", increment("1")))
        #expect(database.value(at: try path("/big")) == .double(9_223_372_036_854_775_808.0), "overflow falls back to a double")
        try await database.write(set("/d", "0.5"))
        try await database.write(set("/d", increment("1")))
        #expect(database.value(at: try path("/d")) == .double(1.5))
    }
}
