import Foundation
import HearthTesting
import NIOCore
import Testing

@testable import HearthServer

/// What the hosted files' cache holds in memory, and when it streams from disk instead.
@Suite("The hosted files' cache")
struct HostedFileCacheTests {
    func withFile(bytes: Int, _ body: (String) async throws -> Void) async throws {
        let folder = try TemporaryDirectory(prefix: "hearth-hosted-cache")
        defer { folder.remove() }
        let file = folder.url.appendingPathComponent("page.html")
        try Data(repeating: UInt8(ascii: "x"), count: bytes).write(to: file)
        try await body(file.path)
    }

    @Test("A small file is read once and kept; a changed one is read again")
    func keepsSmallFiles() async throws {
        try await withFile(bytes: 1000) { path in
            let cache = HostedFileCache()
            guard case .loaded(let first) = try await cache.file(at: path) else { return #expect(Bool(false), "not loaded") }
            #expect(first.bytes.readableBytes == 1000)
            #expect(first.encoded[.gzip] != nil)
            guard case .loaded(let again) = try await cache.file(at: path) else { return #expect(Bool(false), "not loaded") }
            #expect(again.etag == first.etag)
            try Data(repeating: UInt8(ascii: "y"), count: 1001).write(to: URL(fileURLWithPath: path))
            guard case .loaded(let changed) = try await cache.file(at: path) else { return #expect(Bool(false), "not loaded") }
            #expect(changed.bytes.readableBytes == 1001)
            #expect(changed.etag != first.etag)
        }
    }

    @Test("Over the size limit, or with the read budget spent, a file is streamed from disk")
    func streamsWhatItWouldNotHold() async throws {
        try await withFile(bytes: HostedFileCache.maxLoadedBytes + 1) { path in
            guard case .onDisk(let file) = try await HostedFileCache().file(at: path) else { return #expect(Bool(false), "loaded") }
            #expect(file.size == Int64(HostedFileCache.maxLoadedBytes + 1))
            #expect(file.contentType == "text/html; charset=utf-8")
        }
        try await withFile(bytes: 1000) { path in
            let starved = HostedFileCache(readBudget: 1500)  // reading holds twice the size
            guard case .onDisk(let file) = try await starved.file(at: path) else { return #expect(Bool(false), "loaded") }
            #expect(file.size == 1000)
            #expect(try await HostedFileCache().file(at: path + ".missing") == nil)
        }
    }
}
