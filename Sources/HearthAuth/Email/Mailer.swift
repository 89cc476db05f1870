/// Sends email. ``SMTPMailer`` (in HearthServer) is the real one; tests pass their own.
public protocol Mailer: Sendable {
    /// Delivers `message`; throws when the mail server refuses it or cannot be reached.
    func send(_ message: MailMessage) async throws
}

/// One email: a plain-text body and, optionally, an HTML alternative.
public struct MailMessage: Sendable, Equatable {
    /// The sender, `Name <address>` or an address.
    public var from: String
    public var to: String
    public var subject: String
    public var text: String
    public var html: String?

    public init(from: String, to: String, subject: String, text: String, html: String? = nil) {
        self.from = from
        self.to = to
        self.subject = subject
        self.text = text
        self.html = html
    }
}
