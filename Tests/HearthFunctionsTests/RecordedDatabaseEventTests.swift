import Foundation
@testable import HearthFunctions
import HearthOutbox
import Testing

/// The form database events are kept in (the attributes that vary, then the data), read back,
/// and made into the CloudEvent Firebase sends by ``EventEnvelope``; bodies that are not in it
/// pass through, and damaged ones are refused.
struct RecordedDatabaseEventTests {
    static let naming = DatabaseEventRecorder.Naming(databaseHost: "db.example.test:9000", location: "europe-west1")
    static let data = Array(#"{"data":{"a":1},"delta":{"b":"x\ny"}}"#.utf8)

    @Test func itReadsBackWhatWasStoredWithItsDataUntouched() throws {
        let event = RecordedDatabaseEvent(
            instance: "my-db", change: .updated, ref: #"posts/"quoted"/ünï\cödé"#, authtype: "app_user", authid: "u\"1")
        let stored = event.stored(data: Self.data)
        #expect(RecordedDatabaseEvent.isRecorded(stored))
        let (read, data) = try RecordedDatabaseEvent.read(stored)
        #expect(read == event)
        #expect(Array(data) == Self.data)
        // No authid for writers without a user.
        let admin = RecordedDatabaseEvent(instance: "d", change: .deleted, ref: "a", authtype: "admin", authid: nil)
        #expect(!String(decoding: admin.stored(data: Array("{}".utf8)), as: UTF8.self).contains("authid"))
        #expect(try RecordedDatabaseEvent.read(admin.stored(data: Array("{}".utf8))).event == admin)
    }

    @Test func theEnvelopeMakesFirebasesCloudEvent() throws {
        let event = RecordedDatabaseEvent(instance: "my-db", change: .written, ref: "posts/p1", authtype: "admin", authid: nil)
        let kept = OutboxEvent(subscriber: "fn", id: "evt-1", body: event.stored(data: Self.data), time: 1_764_342_000_123)
        let bytes = try EventEnvelope(naming: Self.naming).structured(kept)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(object["specversion"] as? String == "1.0")
        #expect(object["id"] as? String == "evt-1")
        #expect(object["type"] as? String == "google.firebase.database.ref.v1.written")
        #expect(object["source"] as? String == "//firebasedatabase.googleapis.com/projects/_/locations/europe-west1/instances/my-db")
        #expect(object["subject"] as? String == "refs/posts/p1")
        #expect(object["time"] as? String == "2025-11-28T15:00:00.123Z")
        #expect(object["datacontenttype"] as? String == "application/json")
        #expect(object["instance"] as? String == "my-db" && object["ref"] as? String == "posts/p1")
        #expect(object["firebasedatabasehost"] as? String == "db.example.test:9000" && object["location"] as? String == "europe-west1")
        #expect(object["authtype"] as? String == "admin" && object["authid"] == nil)
        #expect(try canonicalJSON(try #require(object["data"])) == (try canonicalJSON(text: String(decoding: Self.data, as: UTF8.self))))
        // Kept four times smaller than what is delivered.
        #expect(kept.body.count * 2 < bytes.count)
    }

    @Test func eventsKeptWholePassThrough() throws {
        let whole = CloudEvent(id: "s1", source: "//storage", type: "google.cloud.storage.object.v1.finalized", subject: nil, time: 5, data: Array("{}".utf8))
        let kept = OutboxEvent(subscriber: "fn", id: "s1", body: whole.structured(), time: 5)
        #expect(try EventEnvelope(naming: Self.naming).structured(kept) == whole.structured())
    }

    @Test(arguments: [
        #"{"recorded":"database","instance":"d","change":"written","ref":"a","authtype":"admin"}"#,
        #"{"recorded":"database","instance":"d","change":"written","ref":"a","authtype":"admin"}"# + "\n",
        #"{"recorded":"database","instance":"d","change":"renamed","ref":"a","authtype":"admin"}"# + "\n{}",
        #"{"recorded":"database","instance":"d","change":"written","authtype":"admin"}"# + "\n{}",
        #"{"recorded":"database", broken"# + "\n{}",
    ])
    func aDamagedBodyIsRefused(body: String) {
        let kept = OutboxEvent(subscriber: "fn", id: "x", body: Array(body.utf8), time: 5)
        #expect(throws: FunctionError.self) { try EventEnvelope(naming: Self.naming).structured(kept) }
    }
}
