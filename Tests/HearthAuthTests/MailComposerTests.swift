import Foundation
@testable import HearthAuth
import Testing

/// The Internet messages the SMTP client writes (the conversation is tested against a real
/// mail server in Tests/Accounts).
@Suite struct MailComposerTests {
    @Test func aMessageHasHeadersAndBothAlternativesInBase64() throws {
        let message = MailMessage(
            from: "Hearth Test <noreply@example.com>", to: "ana@example.com", subject: "Réinitialiser", text: "Hello\n.\nBye",
            html: "<p>Hello</p>")
        let written = MailComposer.compose(message, date: Date(timeIntervalSince1970: 0), domain: "example.com")
        let lines = written.components(separatedBy: "\r\n")
        #expect(lines.contains("From: Hearth Test <noreply@example.com>"))
        #expect(lines.contains("To: ana@example.com"))
        #expect(lines.contains("Subject: =?UTF-8?B?\(Data("Réinitialiser".utf8).base64EncodedString())?="))
        #expect(lines.contains("Date: Thu, 01 Jan 1970 00:00:00 +0000"))
        #expect(lines.contains { $0.hasPrefix("Content-Type: multipart/alternative; boundary=") })
        #expect(lines.contains(Data("Hello\n.\nBye".utf8).base64EncodedString()))
        #expect(lines.allSatisfy { $0.utf8.count <= 998 })
        // No line of the body can end the data early.
        #expect(MailComposer.dotStuffed(".\r\n..x\r\nok") == "..\r\n...x\r\nok")
    }

    @Test func headersCannotBeInjected() {
        #expect(MailComposer.encodedWord("Hi\r\nBcc: evil@example.com") == "Hi  Bcc: evil@example.com")
        #expect(MailComposer.address(in: "Name <a@b.c>") == "a@b.c")
        #expect(MailComposer.domain(of: "Name <a@b.c>") == "b.c")
    }
}
