import Foundation
import HearthCluster
import HearthFiles
import HearthTesting
import Logging
import NIOCore
import PostgresNIO
import Testing

/// A cluster's file metadata in a real PostgreSQL: every ``FileMetadataBehaviour`` (the checks
/// SQLite's store passes), then file stores of two nodes sharing the database and one content
/// folder (as a folder every node mounts).
@Suite(.serialized) struct PostgresFileMetadataTests {
    static let bucket = "hearth.appspot.com"

    /// Runs `body` with `nodes` metadata stores (one client each) on a new PostgreSQL, prepared.
    static func withMetadata(nodes: Int = 1, _ body: ([PostgresFileMetadata]) async throws -> Void) async throws {
        try await PostgresAccountStoreTests.withStores(nodes: nodes) { _, clients in
            let stores = clients.map { PostgresFileMetadata(client: $0, logger: ClusterLogTests.logger) }
            for store in stores { try await store.prepare() }
            try await body(stores)
        }
    }

    /// Runs `body` with two nodes' file stores over one PostgreSQL and one folder.
    static func withNodes(clock: TestClock = TestClock(), _ body: (FileStore, FileStore, URL) async throws -> Void) async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-cluster-files")
        defer { directory.remove() }
        try await withMetadata(nodes: 2) { metadata in
            let nodes = try metadata.map { try FileStore(directory: directory.url, metadata: $0, clock: { clock.now }) }
            try await body(nodes[0], nodes[1], directory.url)
        }
    }

    static func body(_ bytes: [UInt8]) -> AsyncStream<ByteBuffer> {
        AsyncStream { continuation in
            continuation.yield(ByteBuffer(bytes: bytes))
            continuation.finish()
        }
    }

    static func files(in folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }

    /// Dates the file back to `time` (milliseconds since the epoch), as if written then.
    static func date(_ file: URL, _ time: Int64) throws {
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: Double(time) / 1000)], ofItemAtPath: file.path)
    }

    @Test(arguments: FileMetadataBehaviour.allCases)
    func behaviour(_ behaviour: FileMetadataBehaviour) async throws {
        try await Self.withMetadata { stores in try await behaviour.check(stores[0]) }
    }

    /// What one node stores, another lists and reads; a resumable upload begun on one node is
    /// continued and finished on the other.
    @Test func nodesShareObjectsAndUploads() async throws {
        try await Self.withNodes { a, b, _ in
            let stored = try await a.upload(
                bucket: Self.bucket, name: "alice/p1.txt", fields: ObjectFields(contentType: "text/plain"), body: Self.body([1, 2, 3]))
            #expect(try await b.object(bucket: Self.bucket, name: "alice/p1.txt") == stored)
            #expect(try Data(contentsOf: URL(fileURLWithPath: b.contentPath(of: stored))) == Data([1, 2, 3]))
            let listing = try await b.list(bucket: Self.bucket, delimiter: "/")
            #expect(listing.prefixes == ["alice/"])
            let updated = try await b.updateMetadata(
                bucket: Self.bucket, name: "alice/p1.txt", fields: ObjectFields(customMetadata: ["k": "v"]))
            #expect(try await a.object(bucket: Self.bucket, name: "alice/p1.txt") == updated)

            let session = try await a.startUpload(bucket: Self.bucket, name: "big.bin", fields: ObjectFields(), declaredSize: 6)
            _ = try await a.appendChunk(id: session.id, offset: 0, body: Self.body([1, 2, 3]))
            #expect(try await b.upload(id: session.id)?.received == 3)
            _ = try await b.appendChunk(id: session.id, offset: 3, body: Self.body([4, 5, 6]))
            let finished = try await b.finishUpload(id: session.id)
            #expect(finished.size == 6)
            #expect(try await a.upload(id: session.id)?.status == .final)
            #expect(try await a.object(bucket: Self.bucket, name: "big.bin") == finished)

            try await a.delete(bucket: Self.bucket, name: "alice/p1.txt")
            #expect(try await b.object(bucket: Self.bucket, name: "alice/p1.txt") == nil)
        }
    }

    /// Both nodes store the same name at once, again and again: one object stands and no
    /// content file is left behind.
    @Test func racingUploadsOfOneNameLeaveOneObject() async throws {
        try await Self.withNodes { a, b, folder in
            for round in 0..<10 {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (index, node) in [a, b].enumerated() {
                        group.addTask {
                            _ = try await node.upload(
                                bucket: Self.bucket, name: "shared.bin", fields: ObjectFields(),
                                body: Self.body([UInt8(round), UInt8(index)]))
                        }
                    }
                    try await group.waitForAll()
                }
            }
            let standing = try #require(try await a.object(bucket: Self.bucket, name: "shared.bin"))
            #expect(Self.files(in: folder.appendingPathComponent("blobs")) == [standing.blob])
            #expect(Self.files(in: folder.appendingPathComponent("tmp")).isEmpty)
        }
    }

    /// A node tidying the shared folder takes only what is old: another node's upload in
    /// progress, or content it has just moved into place, stays.
    @Test func leftoversOfOtherNodesAreSparedUntilTheyAreOld() async throws {
        let clock = TestClock()
        let day: Int64 = 24 * 3600 * 1000
        try await Self.withNodes(clock: clock) { a, b, folder in
            let kept = try await a.upload(bucket: Self.bucket, name: "kept.txt", fields: ObjectFields(), body: Self.body([1]))
            try Self.date(folder.appendingPathComponent("blobs/\(kept.blob)"), clock.now - 2 * day)
            // Node A is at work: a simple upload streaming, content moved but not yet recorded,
            // a resumable upload just begun.
            let fresh = ["tmp/streaming", "blobs/moving", "uploads/just-begun"]
            for name in fresh {
                try Data([9]).write(to: folder.appendingPathComponent(name))
                try Self.date(folder.appendingPathComponent(name), clock.now - 1000)
            }
            let live = try await a.startUpload(bucket: Self.bucket, name: "live.txt", fields: ObjectFields())
            try Self.date(folder.appendingPathComponent("uploads/\(live.id)"), clock.now - 2 * day)
            // And what a crash left long ago.
            let stale = ["tmp/crashed", "blobs/unrecorded", "uploads/unknown"]
            for name in stale {
                try Data([8]).write(to: folder.appendingPathComponent(name))
                try Self.date(folder.appendingPathComponent(name), clock.now - 2 * day)
            }
            // The single-node sweep would take everything: a shared store refuses it.
            #expect(throws: FilesError.self) { try b.removeLeftovers() }
            let removed = try await b.removeLeftovers(keepingNewerThan: day)
            #expect(removed == FileStore.Leftovers(blobs: 1, uploads: 2))
            for name in fresh { #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent(name).path)) }
            for name in stale { #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(name).path)) }
            #expect(try await b.upload(id: live.id)?.status == .active)
            #expect(try Data(contentsOf: URL(fileURLWithPath: a.contentPath(of: kept))) == Data([1]))
            // A week on, node A's work is old (abandoned) and the begun upload has expired.
            clock.advance(by: 7 * day)
            #expect(try await b.removeLeftovers(keepingNewerThan: day) == FileStore.Leftovers(blobs: 1, uploads: 3))
            #expect(try await a.upload(id: live.id) == nil)
            #expect(Self.files(in: folder.appendingPathComponent("uploads")).isEmpty)
        }
    }
}
