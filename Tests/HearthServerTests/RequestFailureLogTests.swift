import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Testing

@testable import HearthEngine
@testable import HearthServer

/// A client that goes away mid-request is not the server's failure: it is logged at debug, so
/// `/.hearth/logs` and the console's Recent problems keep only what an operator must see.
@Suite("Request failure logging")
struct RequestFailureLogTests {
    @Test func aConnectionEndedByTheClientIsNotAnError() {
        #expect(Logger.isClientGone(IOError(errnoCode: ECONNRESET, reason: "read(descriptor:pointer:size:)")))
        #expect(Logger.isClientGone(IOError(errnoCode: EPIPE, reason: "write")))
        #expect(Logger.isClientGone(ChannelError.ioOnClosedChannel))
        #expect(Logger.isClientGone(ChannelError.eof))
        #expect(Logger.isClientGone(HTTPParserError.invalidEOFState))
    }

    @Test func otherFailuresStayErrors() {
        #expect(!Logger.isClientGone(IOError(errnoCode: ENOSPC, reason: "write")))
        #expect(!Logger.isClientGone(IOError(errnoCode: EIO, reason: "read")))
        #expect(!Logger.isClientGone(ChannelError.connectPending))
        #expect(!Logger.isClientGone(HTTPParserError.invalidHeaderToken))
        #expect(!Logger.isClientGone(CocoaError(.fileWriteOutOfSpace)))
    }
}
