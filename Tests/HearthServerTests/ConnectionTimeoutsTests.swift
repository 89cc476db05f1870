import NIOCore
import Testing

@testable import HearthEngine
@testable import HearthServer

/// When a connection has waited too long for its client: the decisions behind the server's
/// header, body and idle timeouts, with every event's time given.
@Suite("Connection timeouts")
struct ConnectionTimeoutsTests {
    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000_000)

    static func at(_ seconds: Int64) -> NIODeadline { start + .seconds(seconds) }

    static func timeouts() -> ConnectionTimeouts {
        var limits = ConnectionLimits()
        limits.headerTimeout = .seconds(20)
        limits.bodyTimeout = .seconds(60)
        limits.idleTimeout = .seconds(75)
        return ConnectionTimeouts(limits: limits, now: at(0))
    }

    @Test func theFirstHeadMustBeCompleteWithinTheHeaderTimeout() {
        var timeouts = Self.timeouts()
        #expect(timeouts.deadline?.time == Self.at(20))
        #expect(timeouts.deadline?.phase == .head)
        // Header lines trickling in are reads, not a head: they move nothing.
        for second in 1...19 {
            timeouts.readRequested(at: Self.at(Int64(second)))
            timeouts.readCompleted()
        }
        #expect(timeouts.expired(at: Self.at(19)) == nil)
        #expect(timeouts.expired(at: Self.at(20)) == .head)
    }

    @Test func aBodyMayNotStallWhileTheServerAsksForMore() {
        var timeouts = Self.timeouts()
        timeouts.headReceived(at: Self.at(1))
        #expect(timeouts.deadline?.time == Self.at(61))
        #expect(timeouts.deadline?.phase == .body)
        timeouts.bodyReceived(at: Self.at(30))
        #expect(timeouts.deadline?.time == Self.at(90))
        // The server stops asking (it is busy with what it has): the client is not late.
        timeouts.readCompleted()
        #expect(timeouts.deadline == nil)
        #expect(timeouts.expired(at: Self.at(500)) == nil)
        // It asks again: the client has the whole timeout from then.
        timeouts.readRequested(at: Self.at(600))
        #expect(timeouts.deadline?.time == Self.at(660))
        #expect(timeouts.expired(at: Self.at(660)) == .body)
    }

    @Test func nothingTimesOutWhileAResponseIsWritten() {
        var timeouts = Self.timeouts()
        timeouts.headReceived(at: Self.at(1))
        timeouts.endReceived(at: Self.at(1))
        // An event stream or a long poll: open for as long as it takes.
        #expect(timeouts.deadline == nil)
        #expect(timeouts.expired(at: Self.at(100_000)) == nil)
    }

    @Test func afterAResponseTheIdleTimeoutRuns() {
        var timeouts = Self.timeouts()
        timeouts.headReceived(at: Self.at(1))
        timeouts.endReceived(at: Self.at(1))
        timeouts.responseEnded(at: Self.at(5))
        #expect(timeouts.deadline?.time == Self.at(80))
        #expect(timeouts.deadline?.phase == .idle)
        timeouts.headReceived(at: Self.at(50))
        timeouts.endReceived(at: Self.at(50))
        #expect(timeouts.deadline == nil)
        timeouts.responseEnded(at: Self.at(100))
        #expect(timeouts.expired(at: Self.at(174)) == nil)
        #expect(timeouts.expired(at: Self.at(175)) == .idle)
    }

    @Test func pipelinedRequestsKeepTheConnectionBusyUntilTheLastResponse() {
        var timeouts = Self.timeouts()
        for _ in 0..<2 {
            timeouts.headReceived(at: Self.at(1))
            timeouts.endReceived(at: Self.at(1))
        }
        timeouts.responseEnded(at: Self.at(2))
        #expect(timeouts.deadline == nil)
        timeouts.responseEnded(at: Self.at(3))
        #expect(timeouts.deadline?.time == Self.at(78))
    }
}
