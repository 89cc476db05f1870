import Foundation
import HearthCore

/// A CloudEvents 1.0 event, as Hearth delivers trigger events to functions: Firebase's
/// functions are CloudEvents functions, and its SDKs read these attributes and `data`.
///
/// Kept (in an outbox) and sent in the structured JSON form (`application/cloudevents+json`),
/// which carries the attributes and the data in one document.
public struct CloudEvent: Sendable, Equatable {
    public var id: String
    /// Who emitted it, as Firebase names it: `//firebasedatabase.googleapis.com/projects/_/locations/us-central1/instances/<db>`.
    public var source: String
    /// What happened: `google.firebase.database.ref.v1.written` and the like.
    public var type: String
    /// What it is about within the source: `refs/posts/p1`.
    public var subject: String?
    /// When it happened, in milliseconds since the epoch.
    public var time: Int64
    /// Extension attributes (Firebase's `instance`, `ref`, `location`, `authtype`, …).
    public var extensions: [String: String]
    /// The data as JSON text (always `application/json`).
    public var data: [UInt8]

    public init(
        id: String, source: String, type: String, subject: String?, time: Int64, extensions: [String: String] = [:],
        data: [UInt8]
    ) {
        self.id = id
        self.source = source
        self.type = type
        self.subject = subject
        self.time = time
        self.extensions = extensions
        self.data = data
    }

    /// `time` as CloudEvents writes it (RFC 3339, UTC, milliseconds). Computed with integer
    /// arithmetic (days to a civil date as in Howard Hinnant's `civil_from_days`): it runs for
    /// every event a write records, under the database writer's lock.
    public static func timestamp(_ milliseconds: Int64) -> String {
        var bytes: [UInt8] = []
        appendTimestamp(milliseconds, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends ``timestamp(_:)``'s text to `output`, digit by digit.
    static func appendTimestamp(_ milliseconds: Int64, to output: inout [UInt8]) {
        let dayMilliseconds: Int64 = 86_400_000
        var days = milliseconds / dayMilliseconds
        var rest = milliseconds % dayMilliseconds
        if rest < 0 {
            rest += dayMilliseconds
            days -= 1
        }
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func digits(_ value: Int64, _ width: Int) {
            let text = value < 0 || value >= 10_000 ? Array(String(value).utf8) : []
            guard text.isEmpty else { return output.append(contentsOf: text) }
            var divisor: Int64 = 1
            for _ in 1..<width { divisor *= 10 }
            while divisor > 0 {
                output.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
        }
        let seconds = rest / 1000
        digits(year, 4)
        output.append(UInt8(ascii: "-"))
        digits(month, 2)
        output.append(UInt8(ascii: "-"))
        digits(day, 2)
        output.append(UInt8(ascii: "T"))
        digits(seconds / 3600, 2)
        output.append(UInt8(ascii: ":"))
        digits(seconds / 60 % 60, 2)
        output.append(UInt8(ascii: ":"))
        digits(seconds % 60, 2)
        output.append(UInt8(ascii: "."))
        digits(rest % 1000, 3)
        output.append(UInt8(ascii: "Z"))
    }

    /// The structured JSON form: the attributes and `data` in one object.
    public func structured() -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256 + data.count)
        output.append(contentsOf: #"{"specversion":"1.0""#.utf8)
        // Byte by byte into one buffer: this runs for every event a write records, under the
        // database writer's lock.
        func attribute(_ name: String, _ value: String) {
            output.append(UInt8(ascii: ","))
            JSONWriter.appendString(name, to: &output)
            output.append(UInt8(ascii: ":"))
            JSONWriter.appendString(value, to: &output)
        }
        attribute("id", id)
        attribute("source", source)
        attribute("type", type)
        if let subject { attribute("subject", subject) }
        output.append(contentsOf: #","time":""#.utf8)
        Self.appendTimestamp(time, to: &output)
        output.append(contentsOf: #"","datacontenttype":"application/json""#.utf8)
        for (name, value) in extensions.sorted(by: { $0.key < $1.key }) { attribute(name, value) }
        output.append(contentsOf: #","data":"#.utf8)
        output.append(contentsOf: data)
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// Reads the structured JSON form back.
    /// - Throws: ``FunctionError`` when it is not a CloudEvent.
    public init(structured bytes: [UInt8]) throws {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
            let id = object["id"] as? String, let source = object["source"] as? String, let type = object["type"] as? String,
            let timeText = object["time"] as? String
        else { throw FunctionError.invalidEvent("not a structured CloudEvent") }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = formatter.date(from: timeText) else { throw FunctionError.invalidEvent("bad time \(timeText)") }
        var extensions: [String: String] = [:]
        let standard: Set<String> = ["specversion", "id", "source", "type", "subject", "time", "datacontenttype", "data"]
        for (name, value) in object where !standard.contains(name) {
            if let text = value as? String { extensions[name] = text }
        }
        var data: [UInt8] = Array("null".utf8)
        if let value = object["data"], !(value is NSNull) {
            data = Array(try JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed, .sortedKeys]))
        }
        self.init(
            id: id, source: source, type: type, subject: object["subject"] as? String,
            time: Int64((date.timeIntervalSince1970 * 1000).rounded()), extensions: extensions, data: data)
    }
}
