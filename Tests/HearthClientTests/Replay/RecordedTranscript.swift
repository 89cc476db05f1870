import Foundation

/// One transcript of `Tests/Events/recorded/` (format 1): what the official Firebase JS SDK
/// did while running one event scenario against a real server, the calls made on it, the
/// realtime messages both ways and the events its listeners reported, on one timeline (the
/// format is described in that folder's README).
struct RecordedTranscript: Decodable, Sendable {
    let format: Int
    let scenario: String
    let root: String
    let barrier: String
    /// The value at `root` the admin wrote before any client opened.
    let initial: JSONValue?
    let setup: [Entry]
    let steps: [Step]

    struct Step: Decodable, Sendable {
        let index: Int
        /// The scenario's step, as in the scenario file.
        let step: JSONValue
        let timeline: [Entry]
        /// The events the SDK's listeners reported during the step.
        let events: [JSONValue]
        let error: String?
    }

    /// One thing that happened: a call, a socket opening or closing, a message sent or
    /// received, a call's result, or an event.
    struct Entry: Decodable, Sendable {
        let seq: Int
        let kind: Kind
        /// `local` (the client whose listeners are recorded) or `remote`.
        let conn: String?
        let socket: Int?
        let call: JSONValue?
        let message: JSONValue?
        let event: JSONValue?
        /// For a `result`: the `seq` of the call it answers, and its error (nil: accepted).
        let of: Int?
        let error: String?

        enum Kind: String, Decodable, Sendable {
            case call, result, open, send, receive, close, event
        }

        var isLocal: Bool { conn == "local" }
    }

    /// The folder of transcripts: `Tests/Events/recorded`, found from this file's path (not a
    /// SwiftPM resource, since it lies outside the test target).
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Events/recorded")

    /// The names of the recorded scenarios, sorted.
    static var names: [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return files.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(".json".count)) }.sorted()
    }

    static func load(_ name: String) throws -> RecordedTranscript {
        let data = try Data(contentsOf: folder.appendingPathComponent(name + ".json"))
        return try JSONDecoder().decode(RecordedTranscript.self, from: data)
    }
}
