import Foundation
import Logging

/// Writes one JSON object per line to standard error (`hearth serve --log-format json`), for
/// log collectors: `time` (ISO 8601 with milliseconds), `level`, `logger`, `message`, `source`,
/// and the metadata as fields (a request's `hb.request.id` among them). Lines are encoded with
/// Foundation's JSON serializer, so any text in a message or a value stays one valid line.
/// Metadata is rendered only when a line is written (see ``ConsoleLogHandler`` for why).
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let recent: RecentLogEntries?

    /// A handler for the logger labelled `label`; warnings and errors also go to `recent`.
    public init(label: String, recent: RecentLogEntries? = nil) {
        self.label = label
        self.recent = recent
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let merged = Self.merged(metadata, metadataProvider, event)
        let time = Date()
        var object: [String: Any] = [:]
        for (key, value) in merged { object[key] = Self.json(value) }
        object["time"] = time.formatted(.iso8601.time(includingFractionalSeconds: true).year().month().day().dateSeparator(.dash))
        object["level"] = event.level.rawValue
        object["logger"] = label
        object["message"] = "\(event.message)"
        object["source"] = event.source
        guard var line = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return
        }
        line.append(UInt8(ascii: "\n"))
        FileHandle.standardError.write(line)
        recent?.record(level: event.level, message: "\(event.message)", metadata: merged, source: event.source, at: time)
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
