import HearthCore
import HearthProtocol
import Testing

@testable import HearthEngine
@testable import HearthServer

/// Every failure of an operation reads as a status the SDKs know.
@Suite("Realtime statuses")
struct RealtimeStatusTests {
    @Test func failuresMapToTheSDKsStatuses() {
        #expect(RealtimeStatus(HearthError.permissionDeniedByRules) == .init(status: "permission_denied", message: "Permission denied"))
        #expect(RealtimeStatus(DatabaseOperations.ConditionFailed(current: .int(1))).status == "datastale")
        #expect(RealtimeStatus(RequestAuth.expired).status == "expired_token")
        #expect(RealtimeStatus(RequestAuth.unparseable).status == "invalid_token")
        #expect(RealtimeStatus(HearthError.writeTooBig).status == "write_too_big")
        #expect(RealtimeStatus(HearthError(.unavailable, "The database is unavailable.")).status == "unavailable")
        let index = DatabaseOperations.indexNotDefined(.child(try! Path(parsing: "n")), at: try! Path(parsing: "scores"))
        #expect(RealtimeStatus(index) == .init(status: "failed", message: index.message))
        let badKey = RealtimeStatus(RealtimeProtocolError.invalidData(HearthError.invalidKey(line: 1, column: 2)))
        #expect(badKey.status == "failed" && badKey.message.hasPrefix("Invalid data; couldn't parse key"))
        #expect(RealtimeStatus(CancellationError()).status == "failed")
    }
}
