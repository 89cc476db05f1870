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

    @Test(.timeLimit(.minutes(5)))
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
            let delay = UInt64.random(in: 300_000_000...1_500_000_000, using: &random)
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
