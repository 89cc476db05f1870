import Crypto
import Foundation
import HearthFiles
import HearthTesting
import NIOCore
import Testing

/// What the store keeps and decides for Cloud Storage's JSON API: CRC-32C beside the MD5,
/// version conditions, client checksums, listing offsets, copies and composes.
@Suite struct CloudStorageSemanticsTests {
    static let bucket = "hearth.appspot.com"

    static func body(_ bytes: [UInt8]) -> AsyncStream<ByteBuffer> {
        AsyncStream { continuation in
            continuation.yield(ByteBuffer(bytes: bytes))
            continuation.finish()
        }
    }

    @Test func crc32cMatchesTheStandardVectors() {
        var check = CRC32C()
        check.update(Array("123456789".utf8))
        #expect(check.value == 0xE306_9283)
        // RFC 3720 B.4: 32 bytes of zeros, and of 0xFF.
        var zeros = CRC32C()
        zeros.update([UInt8](repeating: 0, count: 32))
        #expect(zeros.value == 0x8A91_36AA)
        var ones = CRC32C()
        ones.update([UInt8](repeating: 0xFF, count: 32))
        #expect(ones.value == 0x62A8_AB43)
        // Google's form: the four bytes big-endian in base64 (gsutil's "yZRlqg==" for "hello world").
        var hello = CRC32C()
        hello.update(Array("hello world".utf8))
        #expect(hello.base64 == "yZRlqg==")
    }

    @Test func crc32cIsTheSameInPieces() {
        let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        var whole = CRC32C()
        whole.update(bytes)
        var pieces = CRC32C()
        var start = 0
        for size in [1, 7, 8, 9, 1000, 3, 4096] where start < bytes.count {
            pieces.update(bytes[start..<min(start + size, bytes.count)])
            start += size
        }
        pieces.update(bytes[start...])
        #expect(whole.value == pieces.value)
    }

    @Test func preconditionsHoldOrRefuse() throws {
        let object = StoredObject(
            bucket: Self.bucket, name: "a", size: 1, contentType: "text/plain", md5Hash: "x", generation: 42, metageneration: 3,
            timeCreated: 0, updated: 0, blob: "b")
        try ObjectPreconditions(ifGenerationMatch: 42, ifMetagenerationMatch: 3).check(object)
        try ObjectPreconditions(ifGenerationMatch: 0).check(nil)
        try ObjectPreconditions(ifGenerationNotMatch: 41, ifMetagenerationNotMatch: 2).check(object)
        for conditions in [
            ObjectPreconditions(ifGenerationMatch: 0), ObjectPreconditions(ifGenerationMatch: 41),
            ObjectPreconditions(ifGenerationNotMatch: 42), ObjectPreconditions(ifMetagenerationMatch: 2),
            ObjectPreconditions(ifMetagenerationNotMatch: 3),
        ] {
            #expect(throws: FilesError.conditionNotMet) { try conditions.check(object) }
        }
        #expect(throws: FilesError.conditionNotMet) { try ObjectPreconditions(ifGenerationMatch: 42).check(nil) }
        #expect(throws: FilesError.conditionNotMet) { try ObjectPreconditions(ifMetagenerationMatch: 1).check(nil) }
    }

    @Test func uploadsKeepBothChecksumsAndRefuseWrongOnes() async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-files")
        defer { directory.remove() }
        let clock = TestClock()
        let store = try FileStore(directory: directory.url, clock: { clock.now })
        let bytes = Array("hello world".utf8)
        let object = try await store.upload(bucket: Self.bucket, name: "a.txt", fields: ObjectFields(), body: Self.body(bytes))
        #expect(object.crc32c == "yZRlqg==")
        #expect(object.md5Hash == Data(Insecure.MD5.hash(data: bytes)).base64EncodedString())
        #expect(try await store.object(bucket: Self.bucket, name: "a.txt")?.crc32c == "yZRlqg==")

        let wrong = ExpectedDigests(crc32c: "AAAAAA==")
        await #expect(throws: FilesError.self) {
            try await store.upload(
                bucket: Self.bucket, name: "b.txt", fields: ObjectFields(), body: Self.body(bytes),
                authorize: { incoming, _ in try wrong.check(incoming) })
        }
        #expect(try await store.object(bucket: Self.bucket, name: "b.txt") == nil)

        // Resumable uploads get theirs when they finish.
        let session = try await store.startUpload(bucket: Self.bucket, name: "c.txt", fields: ObjectFields(), declaredSize: 11)
        _ = try await store.appendChunk(id: session.id, offset: 0, body: Self.body(bytes))
        #expect(try await store.finishUpload(id: session.id).crc32c == "yZRlqg==")
    }

    @Test func listingsTakeStartAndEndOffsets() async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-files")
        defer { directory.remove() }
        let clock = TestClock()
        let store = try FileStore(directory: directory.url, clock: { clock.now })
        for name in ["p/a", "p/b", "p/c/x", "p/d", "q/e"] {
            _ = try await store.upload(bucket: Self.bucket, name: name, fields: ObjectFields(), body: Self.body([1]))
        }
        let ranged = try await store.list(bucket: Self.bucket, prefix: "p/", startOffset: "p/b", endOffset: "p/d")
        #expect(ranged.items.map(\.name) == ["p/b", "p/c/x"])
        let folders = try await store.list(bucket: Self.bucket, prefix: "p/", delimiter: "/", startOffset: "p/b")
        #expect(folders.items.map(\.name) == ["p/b", "p/d"])
        #expect(folders.prefixes == ["p/c/"])
        // An offset before the prefix or past its end does not widen the listing.
        let wide = try await store.list(bucket: Self.bucket, prefix: "p/", startOffset: "a", endOffset: "z")
        #expect(wide.items.map(\.name) == ["p/a", "p/b", "p/c/x", "p/d"])
        let paged = try await store.list(bucket: Self.bucket, maxResults: 2, startOffset: "p/b", endOffset: "q")
        #expect(paged.items.map(\.name) == ["p/b", "p/c/x"])
        let next = try await store.list(bucket: Self.bucket, pageToken: paged.nextPageToken, maxResults: 2, startOffset: "p/b", endOffset: "q")
        #expect(next.items.map(\.name) == ["p/d"])
        #expect(next.nextPageToken == nil)
    }

    @Test func copiesAndComposesAreNewObjects() async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-files")
        defer { directory.remove() }
        let clock = TestClock()
        let store = try FileStore(directory: directory.url, maxObjectSize: 10, clock: { clock.now })
        let first = try await store.upload(
            bucket: Self.bucket, name: "one", fields: ObjectFields(contentType: "text/plain"), body: Self.body(Array("abc".utf8)))
        let second = try await store.upload(bucket: Self.bucket, name: "two", fields: ObjectFields(), body: Self.body(Array("defg".utf8)))
        let copy = try await store.copy(first, bucket: "other-bucket", name: "copy", fields: ObjectFields(contentType: "text/plain"))
        #expect(copy.md5Hash == first.md5Hash && copy.crc32c == first.crc32c)
        #expect(copy.generation > first.generation)
        let joined = try await store.compose([first, second, first], bucket: Self.bucket, name: "joined", fields: ObjectFields())
        #expect(joined.size == 10)
        let content = try Data(contentsOf: URL(fileURLWithPath: store.contentPath(of: joined)))
        #expect(String(decoding: content, as: UTF8.self) == "abcdefgabc")
        // The store's limits hold for copies too, and a refused one leaves nothing.
        await #expect(throws: FilesError.self) {
            try await store.compose([first, second, first, first], bucket: Self.bucket, name: "too-big", fields: ObjectFields())
        }
        #expect(try await store.object(bucket: Self.bucket, name: "too-big") == nil)
        await #expect(throws: FilesError.self) {
            try await store.compose([], bucket: Self.bucket, name: "nothing", fields: ObjectFields())
        }
    }
}
