import Foundation
import HearthEngine
import Logging

/// Writes log lines to standard error, as readable text or as one JSON object per line
/// (`hearth serve --log-format json`), and keeps the latest warnings and errors in
/// ``RecentLogEntries`` for the console.
///
/// Like swift-log's `StreamLogHandler`, but the metadata is rendered only when a line is
/// written: Hummingbird attaches a request ID to the logger of every request, and
/// `StreamLogHandler` re-renders all metadata on each such change, which cost about 3 % of the
/// server's CPU on point reads even though nothing below a warning is logged.
///
/// A JSON line holds `time` (ISO 8601 with milliseconds), `level`, `logger`, `message`,
/// `source` and the metadata as fields (a request's `hb.request.id` among them), encoded by
/// Foundation's JSON serializer, so any text in a message or a value stays one valid line.
public struct ConsoleLogHandler: LogHandler {
    /// How lines are written.
    public enum Format: Sendable {
        case text, json
    }

    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let format: Format
    private let recent: RecentLogEntries?

    /// A handler for the logger labelled `label`; warnings and errors also go to `recent`.
    public init(label: String, format: Format = .text, recent: RecentLogEntries? = nil) {
        self.label = label
        self.format = format
        self.recent = recent
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        let now = Date()
        let line: Data?
        switch format {
        case .text: line = textLine(event, merged, now)
        case .json: line = jsonLine(event, merged, now)
        }
        if let line { FileHandle.standardError.write(line) }
        recent?.record(level: event.level, message: "\(event.message)", metadata: merged, source: event.source, at: now)
    }

    private func textLine(_ event: LogEvent, _ metadata: Logger.Metadata, _ time: Date) -> Data {
        let rendered = metadata.isEmpty
            ? ""
            : " " + metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        return Data("\(time.formatted(.iso8601)) \(event.level) \(label):\(rendered) [\(event.source)] \(event.message)\n".utf8)
    }

    private func jsonLine(_ event: LogEvent, _ metadata: Logger.Metadata, _ time: Date) -> Data? {
        var object: [String: Any] = [:]
        for (key, value) in metadata { object[key] = Self.json(value) }
        object["time"] = time.formatted(.iso8601.time(includingFractionalSeconds: true).year().month().day().dateSeparator(.dash))
        object["level"] = event.level.rawValue
        object["logger"] = label
        object["message"] = "\(event.message)"
        object["source"] = event.source
        guard var line = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return nil
        }
        line.append(UInt8(ascii: "\n"))
        return line
    }

    static func json(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let text): return text
        case .stringConvertible(let convertible): return convertible.description
        case .array(let values): return values.map(json)
        case .dictionary(let values): return values.mapValues(json)
        }
    }
}
