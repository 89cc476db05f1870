import Foundation
import Logging
import NIOCore
import NIOExtras
import NIOPosix
import NIOSSL

/// Sends email through an SMTP server (RFC 5321): one connection per message, upgraded with
/// STARTTLS (or TLS from the start on port 465), authenticated with AUTH PLAIN or LOGIN.
///
/// No SMTP package is among Hearth's dependencies, so the client is written here on SwiftNIO;
/// TLS is swift-nio-ssl's. Credentials are never sent over a connection without TLS unless the
/// settings say `security: none`.
///
/// Threading: each send owns its channel; replies are handed from the channel's event loop to
/// the sending task through promises (``SMTPReplyHandler``).
public struct SMTPMailer: Mailer {
    /// Where and how to connect.
    public struct Settings: Sendable, Equatable {
        /// How the connection is protected.
        public enum Security: String, Sendable, Equatable {
            /// Plain connection upgraded with STARTTLS; refused if the server does not offer it.
            case startTLS = "starttls"
            /// TLS from the first byte (usually port 465).
            case tls
            /// No TLS at all (a relay on the same machine).
            case none
        }

        public var host: String
        public var port: Int
        public var security: Security
        public var username: String?
        public var password: String?
        /// A PEM file of certificates to trust besides the system's (a private mail server's CA).
        public var trustedCertificatesFile: String?
        /// The name this client gives in EHLO.
        public var clientName: String
        /// How long any one step may take.
        public var timeout: TimeAmount

        public init(
            host: String, port: Int = 587, security: Security = .startTLS, username: String? = nil, password: String? = nil,
            trustedCertificatesFile: String? = nil, clientName: String = "hearth.localdomain", timeout: TimeAmount = .seconds(30)
        ) {
            self.host = host
            self.port = port
            self.security = security
            self.username = username
            self.password = password
            self.trustedCertificatesFile = trustedCertificatesFile
            self.clientName = clientName
            self.timeout = timeout
        }
    }

    /// Why a message was not sent.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public let settings: Settings
    private let group: any EventLoopGroup
    private let clock: @Sendable () -> Date
    /// Made once: reading the trust store and the extra certificates is file I/O.
    private let tls: NIOSSLContext?

    /// - Throws: when the trusted certificates file cannot be read.
    public init(settings: Settings, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, clock: @escaping @Sendable () -> Date = Date.init) throws {
        self.settings = settings
        self.group = group
        self.clock = clock
        tls = try Self.makeTLSContext(settings)
    }

    public func send(_ message: MailMessage) async throws {
        let tls = self.tls
        let hostname = Self.isIPAddress(settings.host) ? nil : settings.host
        let implicitTLS = settings.security == .tls
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(settings.timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if implicitTLS, let tls {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: hostname))
                    }
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineBasedFrameDecoder()))
                    try channel.pipeline.syncOperations.addHandler(SMTPReplyHandler())
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: settings.host, port: settings.port).get()
        } catch {
            throw Failure(description: "cannot reach the mail server \(settings.host):\(settings.port) (\(error))")
        }
        defer { channel.close(promise: nil) }
        let session = SMTPSession(channel: channel, timeout: settings.timeout)
        try await converse(session, message: message, tls: tls, hostname: hostname)
    }

    private func converse(_ session: SMTPSession, message: MailMessage, tls: NIOSSLContext?, hostname: String?) async throws {
        try await session.expect(220, after: nil)
        var extensions = try await session.expect(250, after: "EHLO \(settings.clientName)").lines
        if settings.security == .startTLS {
            guard extensions.contains(where: { $0.uppercased() == "STARTTLS" }), let tls else {
                throw Failure(description: "the mail server does not offer STARTTLS")
            }
            try await session.expect(220, after: "STARTTLS")
            try await session.startTLS(context: tls, hostname: hostname)
            extensions = try await session.expect(250, after: "EHLO \(settings.clientName)").lines
        }
        if let username = settings.username, let password = settings.password {
            let mechanisms = Set(
                extensions.first { $0.uppercased().hasPrefix("AUTH") }?.uppercased().split(separator: " ").dropFirst().map(String.init) ?? [])
            if mechanisms.contains("PLAIN") || !mechanisms.contains("LOGIN") {
                let credentials = Data("\0\(username)\0\(password)".utf8).base64EncodedString()
                try await session.expect(235, after: "AUTH PLAIN \(credentials)", secret: true)
            } else {
                try await session.expect(334, after: "AUTH LOGIN")
                try await session.expect(334, after: Data(username.utf8).base64EncodedString(), secret: true)
                try await session.expect(235, after: Data(password.utf8).base64EncodedString(), secret: true)
            }
        }
        try await session.expect(250, after: "MAIL FROM:<\(MailComposer.address(in: message.from))>")
        try await session.expect([250, 251], after: "RCPT TO:<\(MailComposer.address(in: message.to))>")
        try await session.expect(354, after: "DATA")
        let body = MailComposer.compose(message, date: clock(), domain: MailComposer.domain(of: message.from))
        try await session.expect(250, after: MailComposer.dotStuffed(body) + "\r\n.", secret: true)
        _ = try? await session.expect(221, after: "QUIT")
    }

    private static func makeTLSContext(_ settings: Settings) throws -> NIOSSLContext? {
        guard settings.security != .none else { return nil }
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let file = settings.trustedCertificatesFile {
            let extra = try NIOSSLCertificate.fromPEMFile(file)
            configuration.additionalTrustRoots = [.certificates(extra)]
        }
        return try NIOSSLContext(configuration: configuration)
    }

    public static func isIPAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }
}
