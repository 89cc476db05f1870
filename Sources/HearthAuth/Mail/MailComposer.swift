import Foundation

/// Writes a ``HearthAuth/MailMessage`` as an Internet message (RFC 5322 with MIME): UTF-8
/// text and HTML alternatives in base64, non-ASCII headers as RFC 2047 encoded words.
public enum MailComposer {
    public static func compose(_ message: MailMessage, date: Date, domain: String) -> String {
        let boundary = "hearth-" + UUID().uuidString
        var headers = [
            "From: \(encodedAddress(message.from))",
            "To: \(encodedAddress(message.to))",
            "Subject: \(encodedWord(message.subject))",
            "Date: \(rfc5322Date(date))",
            "Message-ID: <\(UUID().uuidString.lowercased())@\(domain)>",
            "MIME-Version: 1.0",
        ]
        var body: [String]
        if let html = message.html {
            headers.append("Content-Type: multipart/alternative; boundary=\"\(boundary)\"")
            body = [
                "--\(boundary)", "Content-Type: text/plain; charset=UTF-8", "Content-Transfer-Encoding: base64", "",
                base64Lines(message.text), "--\(boundary)", "Content-Type: text/html; charset=UTF-8",
                "Content-Transfer-Encoding: base64", "", base64Lines(html), "--\(boundary)--",
            ]
        } else {
            headers += ["Content-Type: text/plain; charset=UTF-8", "Content-Transfer-Encoding: base64"]
            body = [base64Lines(message.text)]
        }
        return (headers + [""] + body).joined(separator: "\r\n")
    }

    /// Lines starting with `.` get another (RFC 5321 §4.5.2), so none ends the data early.
    public static func dotStuffed(_ text: String) -> String {
        text.components(separatedBy: "\r\n").map { $0.hasPrefix(".") ? "." + $0 : $0 }.joined(separator: "\r\n")
    }

    /// The bare address of `Name <address>` (or the text itself).
    public static func address(in field: String) -> String {
        guard let open = field.lastIndex(of: "<"), let close = field.lastIndex(of: ">"), open < close else {
            return field.trimmingCharacters(in: .whitespaces)
        }
        return String(field[field.index(after: open)..<close])
    }

    public static func domain(of field: String) -> String {
        address(in: field).split(separator: "@").last.map(String.init) ?? "localhost"
    }

    private static func encodedAddress(_ field: String) -> String {
        let bare = address(in: field)
        guard let open = field.lastIndex(of: "<") else { return bare }
        let name = field[..<open].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        return name.isEmpty ? bare : "\(encodedWord(name)) <\(bare)>"
    }

    /// `text` as is when it is printable ASCII, else as `=?UTF-8?B?…?=`.
    public static func encodedWord(_ text: String) -> String {
        let clean = text.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
        if clean.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) { return clean }
        return "=?UTF-8?B?\(Data(clean.utf8).base64EncodedString())?="
    }

    private static func base64Lines(_ text: String) -> String {
        let encoded = Data(text.utf8).base64EncodedString()
        var lines: [Substring] = []
        var index = encoded.startIndex
        while index < encoded.endIndex {
            let end = encoded.index(index, offsetBy: 76, limitedBy: encoded.endIndex) ?? encoded.endIndex
            lines.append(encoded[index..<end])
            index = end
        }
        return lines.joined(separator: "\r\n")
    }

    private static func rfc5322Date(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return formatter.string(from: date)
    }
}
