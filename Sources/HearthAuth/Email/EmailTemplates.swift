import Foundation
import Mustache

/// The messages the account service sends, as Mustache templates an operator can replace.
///
/// Each kind of message has a subject, a plain-text body and an HTML body. A folder given in
/// the settings may hold any of `<name>.subject.mustache`, `<name>.text.mustache` and
/// `<name>.html.mustache`, where `<name>` is `password-reset`, `verify-email`, `email-sign-in`,
/// `change-email` or `recover-email`; the others keep the built-in text. Templates see
/// `appName`, `email`, `newEmail`, `displayName` and `link`. `{{x}}` escapes for HTML: the
/// subject and text templates use `{{{x}}}`.
public struct EmailTemplates: Sendable {
    /// One message kind's three templates.
    public struct Message: Sendable {
        public var subject: MustacheTemplate
        public var text: MustacheTemplate
        public var html: MustacheTemplate
    }

    private var messages: [ActionCode.Kind: Message]

    /// The built-in templates.
    public init() {
        var messages: [ActionCode.Kind: Message] = [:]
        for kind in ActionCode.Kind.allCases {
            let builtIn = Self.builtIn(kind)
            // The built-in text is fixed and valid, so parsing cannot fail.
            messages[kind] = Message(
                subject: try! MustacheTemplate(string: builtIn.subject), text: try! MustacheTemplate(string: builtIn.text),
                html: try! MustacheTemplate(string: builtIn.html))
        }
        self.messages = messages
    }

    /// The built-in templates with those found in `folder` in their place.
    /// - Throws: when a template there cannot be read or parsed (its file is named).
    public init(folder: URL) throws {
        self.init()
        for kind in ActionCode.Kind.allCases {
            guard var message = messages[kind] else { continue }
            for part in ["subject", "text", "html"] {
                let file = folder.appendingPathComponent("\(Self.fileName(kind)).\(part).mustache")
                guard FileManager.default.fileExists(atPath: file.path) else { continue }
                let template: MustacheTemplate
                do {
                    template = try MustacheTemplate(string: try String(contentsOf: file, encoding: .utf8))
                } catch {
                    throw TemplateError(file: file.path, reason: "\(error)")
                }
                switch part {
                case "subject": message.subject = template
                case "text": message.text = template
                default: message.html = template
                }
            }
            messages[kind] = message
        }
    }

    /// A template that could not be used.
    public struct TemplateError: Error, CustomStringConvertible {
        public var file: String
        public var reason: String
        public var description: String { "the email template \(file) is not valid: \(reason)" }
    }

    /// The message of `kind` for these values.
    public func render(_ kind: ActionCode.Kind, values: [String: String]) -> (subject: String, text: String, html: String) {
        guard let message = messages[kind] else { return ("", "", "") }
        let subject = message.subject.render(values).split(whereSeparator: \.isNewline).joined(separator: " ")
        return (subject.trimmingCharacters(in: .whitespaces), message.text.render(values), message.html.render(values))
    }

    static func fileName(_ kind: ActionCode.Kind) -> String {
        switch kind {
        case .passwordReset: "password-reset"
        case .verifyEmail: "verify-email"
        case .emailSignIn: "email-sign-in"
        case .verifyAndChangeEmail: "change-email"
        case .recoverEmail: "recover-email"
        }
    }

    private static func builtIn(_ kind: ActionCode.Kind) -> (subject: String, text: String, html: String) {
        let (subject, lead, action) =
            switch kind {
            case .passwordReset:
                ("Reset your password for {{{appName}}}",
                 "Follow this link to reset your {{appName}} password for your {{email}} account.",
                 "Reset password")
            case .verifyEmail:
                ("Verify your email for {{{appName}}}", "Follow this link to verify your email address.", "Verify email")
            case .emailSignIn:
                ("Sign in to {{{appName}}}",
                 "We received a request to sign in to {{appName}} using this email address. Follow this link to sign in as {{email}}.",
                 "Sign in")
            case .verifyAndChangeEmail:
                ("Verify your new email for {{{appName}}}",
                 "Follow this link to make {{newEmail}} the email address of your {{appName}} account.", "Verify new email")
            case .recoverEmail:
                ("Your sign-in email for {{{appName}}} was changed",
                 "The sign-in email of your {{appName}} account was changed. If you did not ask for this, follow this link to change it back to {{email}}.",
                 "Change it back")
            }
        let textLead = lead.replacingOccurrences(of: "{{", with: "{{{").replacingOccurrences(of: "}}", with: "}}}")
        let text = """
            Hello{{#displayName}} {{{displayName}}}{{/displayName}},

            \(textLead)

            {{{link}}}

            If you didn't ask for this, you can ignore this email.

            Thanks,
            Your {{{appName}}} team

            """
        let html = """
            <!doctype html>
            <html><body style="font-family: system-ui, sans-serif; line-height: 1.5; color: #222">
            <p>Hello{{#displayName}} {{displayName}}{{/displayName}},</p>
            <p>\(lead)</p>
            <p><a href="{{link}}" style="display: inline-block; padding: 10px 18px; background: #c2410c; color: #fff; text-decoration: none; border-radius: 6px">\(action)</a></p>
            <p style="font-size: 90%; color: #555">Or open this link: {{link}}</p>
            <p>If you didn't ask for this, you can ignore this email.</p>
            <p>Thanks,<br>Your {{appName}} team</p>
            </body></html>

            """
        return (subject, text, html)
    }
}
