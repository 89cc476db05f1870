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

    /// `time` as CloudEvents writes it (RFC 3339, UTC, milliseconds).
    public static func timestamp(_ milliseconds: Int64) -> String {
        let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let millis = Int(((milliseconds % 1000) + 1000) % 1000)
        func pad(_ value: Int?, _ width: Int) -> String {
            let text = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.year, 4))-\(pad(parts.month, 2))-\(pad(parts.day, 2))T\(pad(parts.hour, 2)):\(pad(parts.minute, 2)):\(pad(parts.second, 2)).\(pad(millis, 3))Z"
    }

    /// The structured JSON form: the attributes and `data` in one object.
    public func structured() -> [UInt8] {
        var output: [UInt8] = Array(#"{"specversion":"1.0""#.utf8)
        func attribute(_ name: String, _ value: String) {
            output += Array(",".utf8) + JSONWriter.bytes(.string(name)) + Array(":".utf8) + JSONWriter.bytes(.string(value))
        }
        attribute("id", id)
        attribute("source", source)
        attribute("type", type)
        if let subject { attribute("subject", subject) }
        attribute("time", Self.timestamp(time))
        attribute("datacontenttype", "application/json")
        for name in extensions.keys.sorted() { attribute(name, extensions[name]!) }
        output += Array(#","data":"#.utf8) + data + Array("}".utf8)
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
