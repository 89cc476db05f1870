import Foundation
import HearthTesting
import Synchronization
import Testing

/// `kill -9` under concurrent write load loses no acknowledged write and never leaves a
/// multi-path update half-applied.
@Suite("Crash safety", .serialized)
struct CrashTests {
    /// What the clients were told was committed.
    final class Acknowledged: Sendable {
        let puts = Mutex<[String: Int]>([:])     // "w3/i17" -> value
        let pairs = Mutex<Set<String>>([])        // "w3-17"
        let pushes = Mutex<Set<String>>([])       // push IDs
        let stopped = Mutex(false)
    }

    @Test(.timeLimit(.minutes(10)))  // a hang detector, wide enough for a loaded two-core run
    func killNineUnderLoadLosesNothingAcknowledged() async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-crash")
        defer { directory.remove() }
        let acknowledged = Acknowledged()
        var random = SystemRandomNumberGenerator()
        let rounds = 6
        for round in 0..<rounds {
            // Frequent snapshots, so kills also land during snapshots and log compaction.
            let server = try HearthProcess(data: directory.url, extraArguments: ["--snapshot-after-writes", "300"])
            // Everything acknowledged in earlier rounds survived the previous kill.
            try await verify(server: server, acknowledged: acknowledged, round: round)

            acknowledged.stopped.withLock { $0 = false }
            let writers = Task {
                await withTaskGroup(of: Void.self) { group in
                    for writer in 0..<6 {
                        group.addTask {
                            await Self.write(as: writer, round: round, server: server, acknowledged: acknowledged)
                        }
                    }
                }
            }
            // Kill once the load is real (however slow this machine is), at a random moment after.
            let before = acknowledged.puts.withLock { $0.count }
            let deadline = ContinuousClock.now + .seconds(30)
            while acknowledged.puts.withLock({ $0.count }) < before + 15, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            let delay = UInt64.random(in: 0...1_000_000_000, using: &random)
            try await Task.sleep(nanoseconds: delay)
            server.kill9()
            acknowledged.stopped.withLock { $0 = true }
            await writers.value
        }
        let server = try HearthProcess(data: directory.url)
        try await verify(server: server, acknowledged: acknowledged, round: rounds)
        #expect(acknowledged.puts.withLock { $0.count } > 50, "the load was too light to mean anything")
        #expect(acknowledged.pairs.withLock { $0.count } > 10)
        #expect(server.terminate() == 0, "hearth serve exits cleanly on SIGTERM")
    }

    /// One client: a loop of PUTs, multi-path PATCHes and POSTs until the server dies.
    static func write(as writer: Int, round: Int, server: HearthProcess, acknowledged: Acknowledged) async {
        var index = 0
        while !acknowledged.stopped.withLock({ $0 }) {
            index += 1
            let id = "r\(round)w\(writer)"
            do {
                switch index % 3 {
                case 0:
                    // A multi-path update: both halves of the pair, or neither.
                    let pair = "\(id)-\(index)"
                    let body = #"{"pairs/\#(pair)/a": \#(index), "pairs/\#(pair)/b": \#(index), "totals/\#(id)": \#(index)}"#
                    let result = try await httpRequest("PATCH", server.url("/.json"), body: Data(body.utf8))
                    if result.status == 200 { _ = acknowledged.pairs.withLock { $0.insert(pair) } }
                case 1:
                    let result = try await httpRequest("POST", server.url("/posts.json"), body: Data(#"{"by":"\#(id)","n":\#(index)}"#.utf8))
                    if result.status == 200,
                        let object = try JSONSerialization.jsonObject(with: result.body) as? [String: Any],
                        let name = object["name"] as? String {
                        _ = acknowledged.pushes.withLock { $0.insert(name) }
                    }
                default:
                    let result = try await httpRequest("PUT", server.url("/puts/\(id)/i\(index).json"), body: Data("\(index)".utf8))
                    if result.status == 200 { acknowledged.puts.withLock { $0["\(id)/i\(index)"] = index } }
                }
            } catch {
                return  // the server is gone
            }
        }
    }

    func verify(server: HearthProcess, acknowledged: Acknowledged, round: Int) async throws {
        let result = try await httpRequest("GET", server.url("/.json"))
        #expect(result.status == 200)
        let root = (try JSONSerialization.jsonObject(with: result.body, options: [.fragmentsAllowed]) as? [String: Any]) ?? [:]

        let puts = root["puts"] as? [String: [String: Any]] ?? [:]
        for (key, value) in acknowledged.puts.withLock({ $0 }) {
            let parts = key.split(separator: "/").map(String.init)
            let stored = puts[parts[0]]?[parts[1]] as? Int
            #expect(stored == value, "acknowledged PUT \(key) lost after round \(round)")
        }

        let pairs = root["pairs"] as? [String: [String: Any]] ?? [:]
        for pair in acknowledged.pairs.withLock({ $0 }) {
            #expect(pairs[pair] != nil, "acknowledged PATCH \(pair) lost after round \(round)")
        }
        for (pair, halves) in pairs {
            #expect(halves["a"] != nil && halves["b"] != nil, "PATCH \(pair) half-applied after round \(round)")
            #expect(halves["a"] as? Int == halves["b"] as? Int)
        }

        let posts = root["posts"] as? [String: Any] ?? [:]
        for name in acknowledged.pushes.withLock({ $0 }) {
            #expect(posts[name] != nil, "acknowledged POST \(name) lost after round \(round)")
        }
    }
}

/// A resumable upload survives the server being killed in the middle of it.
@Suite("Upload crash safety")
struct UploadCrashTests {
    static let objects = "/v0/b/hearth.appspot.com/o"

    static func post(_ server: HearthProcess, _ path: String, body: Data = Data(), headers: [String: String]) async throws -> HTTPResult {
        try await httpRequest("POST", server.url(path), body: body, headers: headers)
    }

    @Test(.timeLimit(.minutes(10)))  // a hang detector, wide enough for a loaded two-core run
    func aResumableUploadContinuesAfterKillNine() async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-upload-crash")
        defer { directory.remove() }
        let content = Data((0..<2_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let admin = ["Authorization": "Bearer owner"]
        var server = try HearthProcess(data: directory.url, extraArguments: ["--emulator"])
        let start = try await Self.post(
            server, Self.objects + "?name=big%2Fmovie.bin",
            headers: admin.merging([
                "X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Command": "start",
                "X-Goog-Upload-Header-Content-Length": "2000000",
            ]) { $1 })
        #expect(start.status == 200, "\(start.text)")
        let uploadURL = try #require(start.header("X-Goog-Upload-URL").flatMap(URL.init(string:)))
        let target = uploadURL.path + "?" + uploadURL.query!
        let first = try await Self.post(
            server, target, body: content[0..<1_048_576],
            headers: admin.merging(["X-Goog-Upload-Command": "upload", "X-Goog-Upload-Offset": "0"]) { $1 })
        #expect(first.status == 200, "\(first.text)")

        // Killed while the second chunk is arriving: half of it sent, then SIGKILL.
        let head = "POST \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nAuthorization: Bearer owner\r\n"
            + "X-Goog-Upload-Command: upload, finalize\r\nX-Goog-Upload-Offset: 1048576\r\nContent-Length: 951424\r\n\r\n"
        let connection = try RawHTTPConnection(port: server.port, request: head)
        try connection.sendBody(content[1_048_576..<1_500_000])
        try await Task.sleep(for: .milliseconds(300))
        server.kill9()
        connection.disconnect()

        server = try HearthProcess(data: directory.url, extraArguments: ["--emulator"])
        // The object is not there; the upload is, with what reached the disk.
        let missing = try await httpRequest("GET", server.url(Self.objects + "/big%2Fmovie.bin"), headers: admin)
        #expect(missing.status == 404)
        let restartedTarget = target.replacingOccurrences(of: "\(uploadURL.port!)", with: "\(server.port)")
        let query = try await Self.post(server, restartedTarget, headers: admin.merging(["X-Goog-Upload-Command": "query"]) { $1 })
        #expect(query.header("X-Goog-Upload-Status") == "active", "\(query.text)")
        let received = try #require(query.header("X-Goog-Upload-Size-Received").flatMap(Int.init))
        #expect(received >= 1_048_576 && received <= 1_500_000)
        let last = try await Self.post(
            server, restartedTarget, body: content[received...],
            headers: admin.merging(["X-Goog-Upload-Command": "upload, finalize", "X-Goog-Upload-Offset": String(received)]) { $1 })
        #expect(last.status == 200, "\(last.text)")
        let media = try await httpRequest("GET", server.url(Self.objects + "/big%2Fmovie.bin?alt=media"), headers: admin)
        #expect(media.body == content)
        #expect(server.terminate() == 0)
    }
}
