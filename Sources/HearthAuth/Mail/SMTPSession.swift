import NIOCore
import NIOSSL

/// One SMTP reply: its code and the text of each line.
public struct SMTPReply: Sendable {
    public var code: Int
    public var lines: [String]
}

/// One conversation with a mail server over `channel`: send a line, await the reply.
public struct SMTPSession: Sendable {
    public let channel: any Channel
    public let timeout: TimeAmount

    /// Sends `line` (unless nil) and waits for the reply; throws unless its code is `expected`.
    /// - Parameter secret: the line holds credentials or the message: never quoted in errors.
    @discardableResult
    public func expect(_ expected: Set<Int>, after line: String?, secret: Bool = false) async throws -> SMTPReply {
        let reply = try await exchange(line)
        guard expected.contains(reply.code) else {
            let command = secret ? "" : (line.map { " to \"\($0.prefix(40))\"" } ?? "")
            throw SMTPMailer.Failure(
                description: "the mail server answered \(reply.code) \(reply.lines.joined(separator: " "))\(command)")
        }
        return reply
    }

    @discardableResult
    public func expect(_ expected: Int, after line: String?, secret: Bool = false) async throws -> SMTPReply {
        try await expect([expected], after: line, secret: secret)
    }

    private func exchange(_ line: String?) async throws -> SMTPReply {
        let channel = channel
        let promise = channel.eventLoop.makePromise(of: SMTPReply.self)
        let timeout = timeout
        channel.eventLoop.execute {
            do {
                let handler = try channel.pipeline.syncOperations.handler(type: SMTPReplyHandler.self)
                handler.await(promise)
                let deadline = channel.eventLoop.scheduleTask(in: timeout) {
                    promise.fail(SMTPMailer.Failure(description: "the mail server did not answer in time"))
                    channel.close(promise: nil)
                }
                promise.futureResult.whenComplete { _ in deadline.cancel() }
                if let line {
                    channel.writeAndFlush(channel.allocator.buffer(string: line + "\r\n"), promise: nil)
                }
            } catch {
                promise.fail(error)
            }
        }
        return try await promise.futureResult.get()
    }

    /// Puts TLS under the conversation (after the server's 220 to STARTTLS). Anything the
    /// server sent after that 220 came before TLS, where anyone on the way could have written
    /// it: the conversation ends rather than read it as the protected server's answers.
    public func startTLS(context: NIOSSLContext, hostname: String?) async throws {
        let channel = channel
        try await channel.eventLoop.submit {
            let replies = try channel.pipeline.syncOperations.handler(type: SMTPReplyHandler.self)
            guard !replies.hasBuffered else {
                throw SMTPMailer.Failure(description: "the mail server sent data before TLS began")
            }
            try channel.pipeline.syncOperations.addHandler(
                NIOSSLClientHandler(context: context, serverHostname: hostname), position: .first)
        }.get()
    }
}

/// Collects reply lines (`250-…` continues, `250 …` ends a reply) and hands each whole reply
/// to the promise waiting for it. Lives on the channel's event loop only.
public final class SMTPReplyHandler: ChannelInboundHandler {
    public typealias InboundIn = ByteBuffer

    private var lines: [String] = []
    private var ready: [SMTPReply] = []
    private var waiting: EventLoopPromise<SMTPReply>?
    private var failure: (any Error)?

    /// True when replies or part of one arrived that nobody has asked for yet.
    public var hasBuffered: Bool { !ready.isEmpty || !lines.isEmpty }

    public func await(_ promise: EventLoopPromise<SMTPReply>) {
        if !ready.isEmpty {
            promise.succeed(ready.removeFirst())
        } else if let failure {
            promise.fail(failure)
        } else {
            waiting = promise
        }
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        let line = (buffer.readString(length: buffer.readableBytes) ?? "").trimmingSuffix("\r")
        let bytes = Array(line.utf8)
        guard bytes.count >= 3, let code = Int(String(decoding: bytes[0..<3], as: UTF8.self)) else {
            fail(SMTPMailer.Failure(description: "the mail server sent a line that is not SMTP"))
            context.close(promise: nil)
            return
        }
        lines.append(bytes.count > 4 ? String(decoding: bytes[4...], as: UTF8.self) : "")
        if bytes.count > 3, bytes[3] == UInt8(ascii: "-") { return }
        let reply = SMTPReply(code: code, lines: lines)
        lines = []
        if let promise = waiting {
            waiting = nil
            promise.succeed(reply)
        } else {
            ready.append(reply)
        }
    }

    public func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error)
        context.close(promise: nil)
    }

    public func channelInactive(context: ChannelHandlerContext) {
        fail(SMTPMailer.Failure(description: "the mail server closed the connection"))
    }

    private func fail(_ error: any Error) {
        failure = failure ?? error
        waiting?.fail(error)
        waiting = nil
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
