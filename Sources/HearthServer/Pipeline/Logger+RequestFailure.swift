import Foundation
import HearthEngine
import Logging
import NIOCore
import NIOHTTP1

extension Logger {
    /// Logs a request that failed with an unexpected error: at error level, unless the client
    /// went away mid-request. A reset or closed connection is the client's doing; logged as
    /// errors, a few flaky phones would crowd out the failures an operator must see (the
    /// console's Recent problems and `/.hearth/logs` keep warnings and errors only).
    func requestFailed(_ message: Logger.Message, error: any Error, shownAs detail: String? = nil) {
        let level: Logger.Level = Self.isClientGone(error) ? .debug : .error
        log(level: level, message, metadata: ["error": "\(detail ?? "\(error)")"])
    }

    /// True for errors that mean the client's connection ended under the request.
    static func isClientGone(_ error: any Error) -> Bool {
        if let error = error as? IOError {
            return [ECONNRESET, EPIPE, ECONNABORTED, ETIMEDOUT].contains(error.errnoCode)
        }
        // A body cut short: the connection closed before the request's end.
        if let error = error as? HTTPParserError, error == .invalidEOFState { return true }
        if let error = error as? ChannelError {
            switch error {
            case .ioOnClosedChannel, .alreadyClosed, .eof, .outputClosed, .inputClosed: return true
            default: return false
            }
        }
        return false
    }
}
