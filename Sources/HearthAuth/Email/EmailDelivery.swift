import Foundation

/// How the account service emails people: the mail server, the sender, the templates, and
/// where action links point.
public struct EmailDelivery: Sendable {
    /// Sends the messages; nil when no mail server is configured (links can still be made by
    /// admins with `returnOobLink`, and the emulator lists them).
    public var mailer: (any Mailer)?
    /// The `From` of every message.
    public var sender: String
    /// The app's name, as templates show it.
    public var appName: String
    /// The page that handles action links (`https://app.example/__/auth/action`); the link
    /// adds `mode`, `oobCode`, `apiKey`, `continueUrl` and `lang` as Firebase's do.
    public var actionURL: String
    public var templates: EmailTemplates

    public init(mailer: (any Mailer)?, sender: String, appName: String, actionURL: String, templates: EmailTemplates = EmailTemplates()) {
        self.mailer = mailer
        self.sender = sender
        self.appName = appName
        self.actionURL = actionURL
        self.templates = templates
    }
}
