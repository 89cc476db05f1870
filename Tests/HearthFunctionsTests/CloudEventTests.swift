import Foundation
import HearthFunctions
import Testing

/// CloudEvents as Hearth writes and reads them: the time format the functions SDKs parse
/// (RFC 3339, UTC, exactly three fraction digits), and the structured form read back.
struct CloudEventTests {
    @Test(arguments: [
        Int64(0), 1, 999, 86_399_999, 951_782_400_000, 1_764_342_000_123, 4_102_444_800_000, -1, -86_400_001, 253_402_300_799_999,
    ])
    func timestampsAreRFC3339WithMilliseconds(milliseconds: Int64) {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        let expected = formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
        #expect(CloudEvent.timestamp(milliseconds) == expected)
        #expect(CloudEvent.timestamp(milliseconds).wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil)
    }

    @Test func theStructuredFormReadsBack() throws {
        let event = CloudEvent(
            id: "e1", source: "//firebasedatabase.googleapis.com/projects/_/locations/us-central1/instances/default",
            type: "google.firebase.database.ref.v1.written", subject: "refs/a/b", time: 1_764_342_000_123,
            extensions: ["ref": "a/b", "instance": "default"], data: Array(#"{"data":null,"delta":{"x":"\u00e9\n"}}"#.utf8))
        let read = try CloudEvent(structured: event.structured())
        #expect(read.id == "e1" && read.type == event.type && read.subject == "refs/a/b" && read.time == event.time)
        #expect(read.extensions == ["ref": "a/b", "instance": "default"])
        let data = try JSONSerialization.jsonObject(with: Data(read.data)) as? [String: Any]
        #expect((data?["delta"] as? [String: String]) == ["x": "é\n"])
        #expect(throws: FunctionError.self) { try CloudEvent(structured: Array("{}".utf8)) }
    }
}
