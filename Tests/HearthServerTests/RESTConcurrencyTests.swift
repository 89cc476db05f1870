import Foundation
import HearthCore
import HearthStore
import HearthTesting
import Synchronization
import Testing

/// Many clients at once.
@Suite("REST concurrency")
struct RESTConcurrencyTests {
    static let alphabet = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz")

    /// The milliseconds encoded in a push ID's first eight characters.
    static func time(of pushID: String) -> Int64? {
        var value: Int64 = 0
        for character in pushID.prefix(8) {
            guard let digit = alphabet.firstIndex(of: character) else { return nil }
            value = value * 64 + Int64(digit)
        }
        return value
    }

    final class Names: Sendable {
        let committed = Mutex<[String]>([])
    }

    @Test func concurrentPostsAllSucceedWithDistinctIncreasingIDs() async throws {
        try await withServer { (server: TestServer) async throws in
            // Watch the database behind the server, to learn the order the pushes committed in.
            let database = try server.folder.database(named: "default")
            let names = Names()
            database.events.subscribe { source, event in
                guard source.name == "default", case .committed(let committed, _) = event else { return }
                names.committed.withLock { $0 += committed.compactMap(\.pushID) }
            }
            let start = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
            let count = 200
            let results = try await withThrowingTaskGroup(of: (Int, HTTPResult).self) { group in
                for index in 0..<count {
                    group.addTask {
                        (index, try await server.request("POST", "/posts.json", body: #"{"i":\#(index),"by":"client"}"#))
                    }
                }
                var all: [(Int, HTTPResult)] = []
                for try await result in group { all.append(result) }
                return all
            }
            let end = Int64((Date().timeIntervalSince1970 * 1000).rounded(.up))

            #expect(results.count == count)
            var nameOf: [Int: String] = [:]
            for (index, result) in results {
                #expect(result.status == 200, "POST \(index): \(result.status) \(result.text)")
                let name = try #require((result.json as? [String: Any])?["name"] as? String)
                #expect(result.text == #"{"name":"\#(name)"}"#)
                #expect(name.count == 20)
                nameOf[index] = name
            }
            #expect(Set(nameOf.values).count == count, "push IDs are distinct")

            // Each ID's time part lies within the test's run.
            for name in nameOf.values {
                let time = try #require(Self.time(of: name))
                #expect(time >= start && time <= end, "\(name) encodes \(time), outside \(start)...\(end)")
            }

            // In commit order, the IDs only ever increase.
            let order = names.committed.withLock { $0 }
            #expect(order.count == count)
            #expect(Set(order) == Set(nameOf.values))
            for (previous, next) in zip(order, order.dropFirst()) {
                #expect(previous < next, "\(previous) committed before \(next)")
            }

            // All 200 children exist, each holding what its client sent.
            let stored = try #require(try await server.request("GET", "/posts.json").json as? [String: [String: Any]])
            #expect(stored.count == count)
            for (index, name) in nameOf {
                #expect(stored[name]?["i"] as? Int == index)
                #expect(stored[name]?["by"] as? String == "client")
            }
            // The REST view lists them in ID (= time) order too.
            let shallow = try await server.read("/posts.json?shallow=true")
            let listed = shallow.split(separator: "\"").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
            #expect(listed == order)
        }
    }

    @Test func concurrentPatchesAndPutsAreAllApplied() async throws {
        try await withServer { (server: TestServer) async throws in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<100 {
                    group.addTask {
                        let result: HTTPResult
                        if index % 2 == 0 {
                            result = try await server.request("PATCH", "/.json", body: #"{"pairs/p\#(index)/a":\#(index),"pairs/p\#(index)/b":\#(index)}"#)
                        } else {
                            result = try await server.request("PUT", "/puts/p\(index).json", body: "\(index)")
                        }
                        #expect(result.status == 200)
                    }
                }
                try await group.waitForAll()
            }
            let root = try #require(try await server.request("GET", "/.json").json as? [String: Any])
            let pairs = try #require(root["pairs"] as? [String: [String: Int]])
            let puts = try #require(root["puts"] as? [String: Int])
            #expect(pairs.count == 50)
            #expect(puts.count == 50)
            for (key, pair) in pairs { #expect(pair["a"] != nil && pair["a"] == pair["b"], "\(key)") }
        }
    }
}
