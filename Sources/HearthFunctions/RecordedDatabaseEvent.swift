import Foundation
import HearthCore

/// A database event as its outbox keeps it: only what differs from one event to the next (the
/// database, the change, the location, who wrote, the data). The CloudEvent around it, with the
/// attributes every event of a server shares (source, host, region), is made when it is
/// delivered (``EventEnvelope``). Recording runs in the write's commit, and the full CloudEvent
/// was four times the bytes this is; the ID and the time are the outbox's own columns.
///
/// Stored as one line of JSON with the attributes, a newline, and the data's JSON as it was
/// recorded (so the data is never parsed again on its way to the function):
///
///     {"recorded":"database","instance":"db","change":"written","ref":"posts/p1","authtype":"admin"}
///     {"data":null,"delta":{"text":"hi"}}
struct RecordedDatabaseEvent: Codable, Equatable, Sendable {
    /// What the first key says: this layout, as opposed to a structured CloudEvent.
    static let kind = "database"

    var recorded = Self.kind
    var instance: String
    var change: DatabaseTrigger.Change
    /// The changed location, its keys joined with `/`.
    var ref: String
    /// `admin`, `app_user`, `unauthenticated` or `unknown`.
    var authtype: String
    /// The user's ID, for `app_user`.
    var authid: String?

    init(instance: String, change: DatabaseTrigger.Change, ref: String, authtype: String, authid: String?) {
        self.instance = instance
        self.change = change
        self.ref = ref
        self.authtype = authtype
        self.authid = authid
    }

    /// The stored form, with `data` (the event's data JSON) after the attributes. Written byte
    /// by byte: it runs for every event a write records, under the database writer's lock.
    func stored(data: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(96 + ref.utf8.count + data.count)
        output.append(contentsOf: #"{"recorded":"database","instance":"#.utf8)
        JSONWriter.appendString(instance, to: &output)
        output.append(contentsOf: #","change":""#.utf8)
        output.append(contentsOf: change.rawValue.utf8)
        output.append(contentsOf: #"","ref":"#.utf8)
        JSONWriter.appendString(ref, to: &output)
        output.append(contentsOf: #","authtype":"#.utf8)
        JSONWriter.appendString(authtype, to: &output)
        if let authid {
            output.append(contentsOf: #","authid":"#.utf8)
            JSONWriter.appendString(authid, to: &output)
        }
        output.append(contentsOf: "}\n".utf8)
        output.append(contentsOf: data)
        return output
    }

    /// True when `body` is in this layout (not an event recorded whole, as earlier versions did).
    static func isRecorded(_ body: [UInt8]) -> Bool {
        body.starts(with: #"{"recorded":"database""#.utf8)
    }

    /// Reads the stored form back: the attributes and the data's JSON.
    /// - Throws: ``FunctionError/invalidEvent(_:)`` when it is not one.
    static func read(_ body: [UInt8]) throws -> (event: RecordedDatabaseEvent, data: ArraySlice<UInt8>) {
        // The attributes' JSON holds no raw newline (JSON escapes it in strings).
        guard let newline = body.firstIndex(of: UInt8(ascii: "\n")),
            let event = try? JSONDecoder().decode(RecordedDatabaseEvent.self, from: Data(body[..<newline])),
            event.recorded == kind, newline + 1 < body.count
        else { throw FunctionError.invalidEvent("not a recorded database event") }
        return (event, body[(newline + 1)...])
    }

    /// The CloudEvent Firebase sends for it, as the function gets it.
    func cloudEvent(id: String, time: Int64, data: [UInt8], naming: DatabaseEventRecorder.Naming) -> CloudEvent {
        var extensions = [
            "instance": instance,
            "ref": ref,
            "firebasedatabasehost": naming.databaseHost,
            "location": naming.location,
            "authtype": authtype,
        ]
        if let authid { extensions["authid"] = authid }
        return CloudEvent(
            id: id,
            source: "//firebasedatabase.googleapis.com/projects/_/locations/\(naming.location)/instances/\(instance)",
            type: change.eventType,
            subject: "refs/\(ref)",
            time: time,
            extensions: extensions,
            data: data)
    }
}

extension DatabaseTrigger.Change: Codable {}
