import Crypto
import Foundation
import HearthFiles
import HearthTesting
import NIOCore
import Testing

/// The file store on real files in a temporary folder: content streams in and becomes visible
/// only when complete, metadata lives in SQLite, and nothing is left behind by failures.
@Suite struct FileStoreTests {
    static let bucket = "hearth.appspot.com"

    static func withStore(
        maxObjectSize: Int64 = 1 << 20, clock: TestClock = TestClock(), _ body: (FileStore, TemporaryDirectory) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-files")
        defer { directory.remove() }
        let store = try FileStore(directory: directory.url, maxObjectSize: maxObjectSize, clock: { clock.now })
        try await body(store, directory)
    }

    /// `bytes` as a body of `chunk`-sized buffers.
    static func body(_ bytes: [UInt8], chunk: Int = 1000) -> AsyncStream<ByteBuffer> {
        AsyncStream { continuation in
            var start = 0
            while start < bytes.count {
                continuation.yield(ByteBuffer(bytes: bytes[start..<min(start + chunk, bytes.count)]))
                start += chunk
            }
            continuation.finish()
        }
    }

    /// A body that sends `bytes` and then fails, as a dropped connection does.
    static func brokenBody(_ bytes: [UInt8]) -> AsyncThrowingStream<ByteBuffer, any Error> {
        AsyncThrowingStream { continuation in
            continuation.yield(ByteBuffer(bytes: bytes))
            continuation.finish(throwing: TestServerError("connection dropped"))
        }
    }

    static func bytes(_ count: Int, seed: UInt8 = 7) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
    }

    static func md5(_ bytes: [UInt8]) -> String {
        Data(Insecure.MD5.hash(data: bytes)).base64EncodedString()
    }

    static func files(in folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }

    static func content(_ store: FileStore, _ object: StoredObject) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: store.contentPath(of: object))))
    }

    // MARK: - Uploads

    @Test func anUploadStoresContentAndMetadata() async throws {
        try await Self.withStore { (store: FileStore, _: TemporaryDirectory) async throws in
            let data = Self.bytes(5000)
            let fields = ObjectFields(contentType: "image/jpeg", customMetadata: ["caption": "sunset"])
            let stored = try await store.upload(bucket: Self.bucket, name: "alice/full/p1/photo.jpg", fields: fields, body: Self.body(data))
            #expect(stored.size == 5000)
            #expect(stored.md5Hash == Self.md5(data))
            #expect(stored.contentType == "image/jpeg")
            #expect(stored.customMetadata == ["caption": "sunset"])
            #expect(stored.downloadTokens.count == 1)
            #expect(stored.metageneration == 1)
            #expect(try await store.object(bucket: Self.bucket, name: "alice/full/p1/photo.jpg") == stored)
            #expect(try Self.content(store, stored) == data)
            // Without a content type, Cloud Storage's default.
            let plain = try await store.upload(bucket: Self.bucket, name: "notes.bin", fields: ObjectFields(), body: Self.body([1, 2, 3]))
            #expect(plain.contentType == "application/octet-stream")
        }
    }

    @Test func aReplacedObjectGetsANewGenerationAndItsOldContentGoes() async throws {
        try await Self.withStore { (store: FileStore, directory: TemporaryDirectory) async throws in
            let first = try await store.upload(bucket: Self.bucket, name: "a.txt", fields: ObjectFields(), body: Self.body([1]))
            let second = try await store.upload(bucket: Self.bucket, name: "a.txt", fields: ObjectFields(), body: Self.body([2, 2]))
            #expect(second.generation > first.generation)
            #expect(second.downloadTokens != first.downloadTokens)
            #expect(try Self.content(store, second) == [2, 2])
            #expect(Self.files(in: directory.url.appendingPathComponent("blobs")).count == 1)
        }
    }

    @Test func aDroppedUploadLeavesNothing() async throws {
        try await Self.withStore { (store: FileStore, directory: TemporaryDirectory) async throws in
            await #expect(throws: TestServerError.self) {
                try await store.upload(bucket: Self.bucket, name: "a.bin", fields: ObjectFields(), body: Self.brokenBody(Self.bytes(300)))
            }
            #expect(try await store.object(bucket: Self.bucket, name: "a.bin") == nil)
            #expect(Self.files(in: directory.url.appendingPathComponent("tmp")).isEmpty)
            #expect(Self.files(in: directory.url.appendingPathComponent("blobs")).isEmpty)
        }
    }

    @Test func anObjectOverTheLimitIsRefusedWhileItStreams() async throws {
        try await Self.withStore(maxObjectSize: 4096) { (store: FileStore, directory: TemporaryDirectory) async throws in
            let error = await #expect(throws: FilesError.self) {
                try await store.upload(bucket: Self.bucket, name: "big.bin", fields: ObjectFields(), body: Self.body(Self.bytes(5000)))
            }
            #expect(error?.kind == .tooLarge)
            #expect(try await store.object(bucket: Self.bucket, name: "big.bin") == nil)
            #expect(Self.files(in: directory.url.appendingPathComponent("tmp")).isEmpty)
            // Exactly at the limit is fine.
            let fits = try await store.upload(bucket: Self.bucket, name: "fits.bin", fields: ObjectFields(), body: Self.body(Self.bytes(4096)))
            #expect(fits.size == 4096)
        }
    }

    @Test func aRefusedUploadChangesNothing() async throws {
        try await Self.withStore { (store: FileStore, directory: TemporaryDirectory) async throws in
            let kept = try await store.upload(bucket: Self.bucket, name: "a.png", fields: ObjectFields(contentType: "image/png"), body: Self.body([9]))
            await #expect(throws: FilesError.permissionDenied) {
                try await store.upload(
                    bucket: Self.bucket, name: "a.png", fields: ObjectFields(contentType: "text/plain"), declaredSize: 2,
                    body: Self.body([1, 2])
                ) { incoming, existing in
                    // The check sees the upload as declared (no hash yet) and what it would
                    // replace; allowed, it sees the finished upload.
                    #expect(incoming.size == 2)
                    #expect(incoming.contentType == "text/plain")
                    #expect(existing?.contentType == "image/png")
                    if incoming.md5Hash.isEmpty { return }
                    #expect(incoming.md5Hash == Self.md5([1, 2]))
                    throw FilesError.permissionDenied
                }
            }
            #expect(try await store.object(bucket: Self.bucket, name: "a.png") == kept)
            #expect(Self.files(in: directory.url.appendingPathComponent("tmp")).isEmpty)
            #expect(Self.files(in: directory.url.appendingPathComponent("blobs")).count == 1)
        }
    }

    @Test(arguments: [
        "", "/leading", "a//b", "trailing/", "a/../b", "./a", "..", "tab\there", "new\nline", "del\u{7F}",
        String(repeating: "x", count: 1025),
    ])
    func hostileNamesAreRefused(_ name: String) async throws {
        try await Self.withStore { (store: FileStore, directory: TemporaryDirectory) async throws in
            let error = await #expect(throws: FilesError.self) {
                try await store.upload(bucket: Self.bucket, name: name, fields: ObjectFields(), body: Self.body([1]))
            }
            #expect(error?.kind == .invalid)
            #expect(error?.message.hasPrefix("Invalid object name") == true)
            #expect(Self.files(in: directory.url.appendingPathComponent("blobs")).isEmpty)
        }
    }

    @Test func badBucketsAndContentTypesAreRefused() async throws {
        try await Self.withStore { (store: FileStore, _: TemporaryDirectory) async throws in
            for bucket in ["", "ab", "Upper.case", "-dash", "sp ace", "../x"] {
                await #expect(throws: FilesError.invalidBucket) {
                    try await store.upload(bucket: bucket, name: "a", fields: ObjectFields(), body: Self.body([1]))
                }
            }
            for type in ["image", "image/", "/png", "text/plain\r\nX-Evil: 1", "a b/c"] {
                let error = await #expect(throws: FilesError.self) {
                    try await store.upload(bucket: Self.bucket, name: "a", fields: ObjectFields(contentType: type), body: Self.body([1]))
                }
                #expect(error?.message.hasPrefix("Invalid content type") == true)
            }
            // A long but legal name is fine, and so are Unicode names.
            _ = try await store.upload(bucket: Self.bucket, name: String(repeating: "é", count: 512), fields: ObjectFields(), body: Self.body([1]))
            _ = try await store.upload(bucket: Self.bucket, name: "photos/夕焼け.jpg", fields: ObjectFields(contentType: "image/jpeg; q=1"), body: Self.body([1]))
        }
    }

    // MARK: - Metadata and deletion

    @Test func metadataUpdatesMergeAndCount() async throws {
        try await Self.withStore { (store: FileStore, _: TemporaryDirectory) async throws in
            let stored = try await store.upload(
                bucket: Self.bucket, name: "a.jpg", fields: ObjectFields(contentType: "image/jpeg", customMetadata: ["a": "1", "b": "2"]),
                body: Self.body([1, 2, 3]))
            let updated = try await store.updateMetadata(
                bucket: Self.bucket, name: "a.jpg",
                fields: ObjectFields(cacheControl: "public, max-age=60", customMetadata: ["b": nil, "c": "3"]),
                downloadTokens: ["t1", "t2"])
            #expect(updated.customMetadata == ["a": "1", "c": "3"])
            #expect(updated.cacheControl == "public, max-age=60")
            #expect(updated.contentType == "image/jpeg")
            #expect(updated.downloadTokens == ["t1", "t2"])
            #expect(updated.metageneration == 2)
            #expect(updated.generation == stored.generation)
            #expect(updated.etag != stored.etag)
            #expect(try await store.object(bucket: Self.bucket, name: "a.jpg") == updated)
            await #expect(throws: FilesError.notFound) {
                try await store.updateMetadata(bucket: Self.bucket, name: "missing", fields: ObjectFields())
            }
        }
    }

    @Test func deletingRemovesTheObjectAndItsContent() async throws {
        try await Self.withStore { (store: FileStore, directory: TemporaryDirectory) async throws in
            _ = try await store.upload(bucket: Self.bucket, name: "a.jpg", fields: ObjectFields(), body: Self.body([1]))
            await #expect(throws: FilesError.permissionDenied) {
                try await store.delete(bucket: Self.bucket, name: "a.jpg") { _ in throw FilesError.permissionDenied }
            }
            #expect(try await store.object(bucket: Self.bucket, name: "a.jpg") != nil)
            try await store.delete(bucket: Self.bucket, name: "a.jpg")
            #expect(try await store.object(bucket: Self.bucket, name: "a.jpg") == nil)
            #expect(Self.files(in: directory.url.appendingPathComponent("blobs")).isEmpty)
            await #expect(throws: FilesError.notFound) { try await store.delete(bucket: Self.bucket, name: "a.jpg") }
        }
    }

    // MARK: - Listing

    @Test func listingRollsFoldersUpAndPagesThroughEverything() async throws {
        try await Self.withStore { (store: FileStore, _: TemporaryDirectory) async throws in
            let names = [
                "alice/full/p1/a.jpg", "alice/thumb/p1/a.jpg", "alice/avatar.png", "bob/full/p2/b.jpg", "readme.txt", "zed.txt",
            ]
            for name in names {
                _ = try await store.upload(bucket: Self.bucket, name: name, fields: ObjectFields(), body: Self.body([1]))
            }
            _ = try await store.upload(bucket: "other-bucket", name: "alice/x.txt", fields: ObjectFields(), body: Self.body([1]))

            let top = try await store.list(bucket: Self.bucket, delimiter: "/")
            #expect(top.prefixes == ["alice/", "bob/"])
            #expect(top.items.map(\.name) == ["readme.txt", "zed.txt"])
            #expect(top.nextPageToken == nil)

            let alice = try await store.list(bucket: Self.bucket, prefix: "alice/", delimiter: "/")
            #expect(alice.prefixes == ["alice/full/", "alice/thumb/"])
            #expect(alice.items.map(\.name) == ["alice/avatar.png"])

            let everything = try await store.list(bucket: Self.bucket, prefix: "alice/")
            #expect(everything.prefixes.isEmpty)
            #expect(everything.items.map(\.name) == ["alice/avatar.png", "alice/full/p1/a.jpg", "alice/thumb/p1/a.jpg"])

            // Pages of two: every entry once, in order, and the last page says so.
            var seen: [String] = []
            var token: String?
            var pages = 0
            repeat {
                let page = try await store.list(bucket: Self.bucket, delimiter: "/", pageToken: token, maxResults: 2)
                #expect(page.prefixes.count + page.items.count <= 2)
                seen += page.prefixes + page.items.map(\.name)
                token = page.nextPageToken
                pages += 1
            } while token != nil && pages < 10
            #expect(seen == ["alice/", "bob/", "readme.txt", "zed.txt"])
            #expect(pages == 2)

            await #expect(throws: FilesError.self) { try await store.list(bucket: Self.bucket, pageToken: "not a token!") }
            await #expect(throws: FilesError.self) { try await store.list(bucket: Self.bucket, maxResults: 0) }
            await #expect(throws: FilesError.self) { try await store.list(bucket: Self.bucket, delimiter: "|") }
        }
    }

    // MARK: - Resumable uploads

    @Test func aResumableUploadResumesAfterADroppedConnection() async throws {
        try await Self.withStore { (store: FileStore, directory: TemporaryDirectory) async throws in
            let data = Self.bytes(10_000)
            let started = try await store.startUpload(
                bucket: Self.bucket, name: "alice/full/p1/big.jpg", fields: ObjectFields(contentType: "image/jpeg"), declaredSize: 10_000)
            #expect(started.received == 0)
            let first = try await store.appendChunk(id: started.id, offset: 0, body: Self.body(Array(data[0..<4000])))
            #expect(first.received == 4000)
            // The connection drops 1,000 bytes into the next chunk: those bytes are kept.
            await #expect(throws: TestServerError.self) {
                try await store.appendChunk(id: started.id, offset: 4000, body: Self.brokenBody(Array(data[4000..<5000])))
            }
            let asked = try #require(try await store.upload(id: started.id))
            #expect(asked.received == 5000)
            #expect(asked.status == .active)
            // A chunk at the wrong offset is refused and changes nothing.
            let wrong = await #expect(throws: FilesError.self) {
                try await store.appendChunk(id: started.id, offset: 4000, body: Self.body(Array(data[4000..<6000])))
            }
            #expect(wrong?.kind == .invalid)
            #expect(try await store.upload(id: started.id)?.received == 5000)
            // Nothing is visible until the upload is finished.
            #expect(try await store.object(bucket: Self.bucket, name: "alice/full/p1/big.jpg") == nil)
            _ = try await store.appendChunk(id: started.id, offset: 5000, body: Self.body(Array(data[5000...])))
            let object = try await store.finishUpload(id: started.id)
            #expect(object.size == 10_000)
            #expect(object.md5Hash == Self.md5(data))
            #expect(object.contentType == "image/jpeg")
            #expect(try Self.content(store, object) == data)
            #expect(try await store.upload(id: started.id)?.status == .final)
            await #expect(throws: FilesError.uploadNotActive) {
                try await store.appendChunk(id: started.id, offset: 10_000, body: Self.body([1]))
            }
            #expect(Self.files(in: directory.url.appendingPathComponent("uploads")).isEmpty)
        }
    }

    @Test func aResumableUploadSurvivesARestart() async throws {
        let clock = TestClock()
        let directory = try TemporaryDirectory(prefix: "hearth-files")
        defer { directory.remove() }
        let data = Self.bytes(3000)
        let id: String
        do {
            let store = try FileStore(directory: directory.url, clock: { clock.now })
            id = try await store.startUpload(bucket: Self.bucket, name: "a.bin", fields: ObjectFields()).id
            _ = try await store.appendChunk(id: id, offset: 0, body: Self.body(Array(data[0..<1000])))
        }
        let reopened = try FileStore(directory: directory.url, clock: { clock.now })
        let removed = try reopened.removeLeftovers()
        #expect(removed == FileStore.Leftovers())
        #expect(try await reopened.upload(id: id)?.received == 1000)
        _ = try await reopened.appendChunk(id: id, offset: 1000, body: Self.body(Array(data[1000...])))
        let object = try await reopened.finishUpload(id: id)
        #expect(try Self.content(reopened, object) == data)
    }

    @Test func aRefusedFinishEndsTheUploadAndCancellingDoesToo() async throws {
        try await Self.withStore { (store: FileStore, directory: TemporaryDirectory) async throws in
            let upload = try await store.startUpload(bucket: Self.bucket, name: "a.txt", fields: ObjectFields(contentType: "text/plain"))
            _ = try await store.appendChunk(id: upload.id, offset: 0, body: Self.body([1, 2, 3]))
            await #expect(throws: FilesError.permissionDenied) {
                try await store.finishUpload(id: upload.id) { _, _ in throw FilesError.permissionDenied }
            }
            // Refused: its bytes are gone at once, not when it would expire.
            #expect(try await store.object(bucket: Self.bucket, name: "a.txt") == nil)
            #expect(try await store.upload(id: upload.id)?.status == .cancelled)
            #expect(Self.files(in: directory.url.appendingPathComponent("uploads")).isEmpty)
            #expect(Self.files(in: directory.url.appendingPathComponent("tmp")).isEmpty)
            #expect(store.pendingBytes == 0)

            let cancelled = try await store.startUpload(bucket: Self.bucket, name: "b.txt", fields: ObjectFields())
            _ = try await store.appendChunk(id: cancelled.id, offset: 0, body: Self.body([1, 2, 3]))
            #expect(store.pendingBytes == 3)
            try await store.cancelUpload(id: cancelled.id)
            #expect(try await store.upload(id: cancelled.id)?.status == .cancelled)
            await #expect(throws: FilesError.uploadNotActive) { try await store.finishUpload(id: cancelled.id) }
            #expect(Self.files(in: directory.url.appendingPathComponent("uploads")).isEmpty)
            #expect(Self.files(in: directory.url.appendingPathComponent("tmp")).isEmpty)
            #expect(store.pendingBytes == 0)
            // Unknown or malformed upload IDs name nothing.
            #expect(try await store.upload(id: "../files.sqlite") == nil)
            await #expect(throws: FilesError.notFound) { try await store.finishUpload(id: "0000") }
        }
    }

    @Test func uploadsOverTheDeclaredSizeOrLimitAreRefused() async throws {
        try await Self.withStore(maxObjectSize: 2000) { (store: FileStore, _: TemporaryDirectory) async throws in
            await #expect(throws: FilesError.tooLarge(limit: 2000)) {
                try await store.startUpload(bucket: Self.bucket, name: "a", fields: ObjectFields(), declaredSize: 2001)
            }
            let upload = try await store.startUpload(bucket: Self.bucket, name: "a", fields: ObjectFields(), declaredSize: 100)
            await #expect(throws: FilesError.self) {
                try await store.appendChunk(id: upload.id, offset: 0, body: Self.body(Self.bytes(101)))
            }
            // Finishing short of the declared size is refused too.
            let short = try await store.startUpload(bucket: Self.bucket, name: "b", fields: ObjectFields(), declaredSize: 100)
            _ = try await store.appendChunk(id: short.id, offset: 0, body: Self.body(Self.bytes(50)))
            await #expect(throws: FilesError.self) { try await store.finishUpload(id: short.id) }
        }
    }

    // MARK: - Housekeeping

    @Test func leftoversOfACrashAreRemovedAtStart() async throws {
        let clock = TestClock()
        try await Self.withStore(clock: clock) { (store: FileStore, directory: TemporaryDirectory) async throws in
            let kept = try await store.upload(bucket: Self.bucket, name: "kept.txt", fields: ObjectFields(), body: Self.body([1]))
            let live = try await store.startUpload(bucket: Self.bucket, name: "live.txt", fields: ObjectFields())
            _ = try await store.startUpload(bucket: Self.bucket, name: "other.txt", fields: ObjectFields())
            // What a crash leaves: a half-written simple upload, a moved but unrecorded blob,
            // and an upload file nobody knows.
            let folder = directory.url
            try Data([1, 2]).write(to: folder.appendingPathComponent("tmp/half-written"))
            try Data([3]).write(to: folder.appendingPathComponent("blobs/unrecorded"))
            try Data([4]).write(to: folder.appendingPathComponent("uploads/unknown"))
            clock.advance(by: 7 * 24 * 3600 * 1000 - 1)
            // Both uploads are a millisecond short of a week old: kept; one more expires them.
            let first = try store.removeLeftovers()
            #expect(first == FileStore.Leftovers(blobs: 1, uploads: 2))
            #expect(try await store.upload(id: live.id)?.status == .active)
            clock.advance(by: 1)
            let second = try store.removeLeftovers()
            #expect(second == FileStore.Leftovers(blobs: 0, uploads: 2))
            #expect(try await store.upload(id: live.id) == nil)
            #expect(try Self.content(store, kept) == [1])
            #expect(Self.files(in: folder.appendingPathComponent("uploads")).isEmpty)
        }
    }
}
