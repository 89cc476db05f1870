import Foundation
import HearthFiles
import HearthTesting
import NIOCore
import Synchronization
import Testing

/// What unfinished uploads may do before the rules have seen them whole: judged as declared
/// before a byte is kept, continued only by their owner, held to their declared size and to
/// the limits on open uploads and pending bytes, and removed once expired or idle.
@Suite struct UploadLimitsTests {
    static let bucket = FileStoreTests.bucket

    static func withStore(
        maxObjectSize: Int64 = 1 << 20, limits: UploadLimits = UploadLimits(), clock: TestClock = TestClock(),
        _ body: (FileStore, TemporaryDirectory) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-files")
        defer { directory.remove() }
        let store = try FileStore(directory: directory.url, maxObjectSize: maxObjectSize, uploadLimits: limits, clock: { clock.now })
        try await body(store, directory)
    }

    static func files(_ directory: TemporaryDirectory, _ folder: String) -> [String] {
        FileStoreTests.files(in: directory.url.appendingPathComponent(folder))
    }

    /// A body that must not be read: reading it records that it was.
    final class UntouchedBody: AsyncSequence, Sendable {
        typealias Element = ByteBuffer
        let wasRead = Mutex(false)

        struct AsyncIterator: AsyncIteratorProtocol {
            let body: UntouchedBody
            mutating func next() async throws -> ByteBuffer? {
                body.wasRead.withLock { $0 = true }
                return nil
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(body: self) }
        var read: Bool { wasRead.withLock { $0 } }
    }

    /// The sizes each call of an authorization saw, in order.
    final class Seen: Sendable {
        let sizes = Mutex<[Int64]>([])
        func note(_ object: StoredObject) { sizes.withLock { $0.append(object.size) } }
        var all: [Int64] { sizes.withLock { $0 } }
    }

    // MARK: - Judged as declared

    @Test func aSimpleUploadTheRulesRefuseAsDeclaredIsNeverRead() async throws {
        try await Self.withStore { (store: FileStore, directory: TemporaryDirectory) async throws in
            let body = UntouchedBody()
            let seen = Seen()
            await #expect(throws: FilesError.permissionDenied) {
                try await store.upload(
                    bucket: Self.bucket, name: "bob/a.png", fields: ObjectFields(contentType: "image/png"), declaredSize: 900,
                    body: body
                ) { incoming, _ in
                    seen.note(incoming)
                    #expect(incoming.contentType == "image/png")
                    throw FilesError.permissionDenied
                }
            }
            #expect(!body.read)
            #expect(seen.all == [900])
            #expect(Self.files(directory, "tmp").isEmpty)
            #expect(Self.files(directory, "blobs").isEmpty)
        }
    }

    @Test func withoutADeclaredSizeTheRulesMustAllowItEmptyOrAtTheLimit() async throws {
        try await Self.withStore(maxObjectSize: 5000) { (store: FileStore, _: TemporaryDirectory) async throws in
            // A rule with a minimum size allows the upload at the limit: it goes on, and the
            // finished object is judged by its real size.
            let seen = Seen()
            let object = try await store.upload(
                bucket: Self.bucket, name: "a.bin", fields: ObjectFields(), body: FileStoreTests.body(FileStoreTests.bytes(2000))
            ) { incoming, _ in
                seen.note(incoming)
                guard incoming.size >= 1000 else { throw FilesError.permissionDenied }
            }
            #expect(object.size == 2000)
            #expect(seen.all == [0, 5000, 2000])
            // A rule no size passes refuses before the body is read.
            let body = UntouchedBody()
            await #expect(throws: FilesError.permissionDenied) {
                try await store.upload(bucket: Self.bucket, name: "b.bin", fields: ObjectFields(), body: body) { _, _ in
                    throw FilesError.permissionDenied
                }
            }
            #expect(!body.read)
        }
    }

    @Test func aBodyLongerThanDeclaredIsCutOffAndNothingIsKept() async throws {
        try await Self.withStore { (store: FileStore, directory: TemporaryDirectory) async throws in
            let error = await #expect(throws: FilesError.self) {
                try await store.upload(
                    bucket: Self.bucket, name: "a.bin", fields: ObjectFields(), declaredSize: 1500,
                    body: FileStoreTests.body(FileStoreTests.bytes(3000)))
            }
            #expect(error == .overDeclaredSize(1500))
            #expect(Self.files(directory, "tmp").isEmpty)
            #expect(store.pendingBytes == 0)
            // Declaring more than the largest object is refused before the body.
            await #expect(throws: FilesError.tooLarge(limit: 1 << 20)) {
                try await store.upload(
                    bucket: Self.bucket, name: "a.bin", fields: ObjectFields(), declaredSize: (1 << 20) + 1, body: UntouchedBody())
            }
        }
    }

    @Test func aResumableStartIsJudgedAsDeclaredAndARefusalKeepsNothing() async throws {
        try await Self.withStore { (store: FileStore, directory: TemporaryDirectory) async throws in
            let seen = Seen()
            let fields = ObjectFields(contentType: "video/mp4", customMetadata: ["by": "mallory"])
            await #expect(throws: FilesError.permissionDenied) {
                try await store.startUpload(
                    bucket: Self.bucket, name: "alice/big.mp4", fields: fields, declaredSize: 64 << 20,
                    owner: .signedOut(address: "192.0.2.1")
                ) { incoming, existing in
                    seen.note(incoming)
                    #expect(incoming.contentType == "video/mp4")
                    #expect(incoming.customMetadata == ["by": "mallory"])
                    #expect(existing == nil)
                    throw FilesError.permissionDenied
                }
            }
            // Judged by the declared size even past the largest object: the refusal comes first.
            #expect(seen.all == [64 << 20])
            #expect(Self.files(directory, "uploads").isEmpty)
        }
    }

    // MARK: - Continued by the owner only

    @Test func onlyTheOwnerContinuesAnUpload() async throws {
        try await Self.withStore { (store: FileStore, directory: TemporaryDirectory) async throws in
            let upload = try await store.startUpload(
                bucket: Self.bucket, name: "alice/a.bin", fields: ObjectFields(), declaredSize: 6, owner: .user("alice"))
            for stranger in [UploadOwner.user("bob"), .signedOut(address: "127.0.0.1")] {
                #expect(try await store.upload(id: upload.id, for: stranger) == nil)
                await #expect(throws: FilesError.notFound) {
                    try await store.appendChunk(id: upload.id, offset: 0, caller: stranger, body: FileStoreTests.body([6, 6, 6]))
                }
                await #expect(throws: FilesError.notFound) { try await store.finishUpload(id: upload.id, caller: stranger) }
                await #expect(throws: FilesError.notFound) { try await store.cancelUpload(id: upload.id, caller: stranger) }
            }
            #expect(try await store.upload(id: upload.id, for: .user("alice"))?.received == 0)
            _ = try await store.appendChunk(id: upload.id, offset: 0, caller: .user("alice"), body: FileStoreTests.body([1, 2, 3]))
            // An admin may continue anyone's.
            _ = try await store.appendChunk(id: upload.id, offset: 3, caller: .admin, body: FileStoreTests.body([4, 5, 6]))
            let object = try await store.finishUpload(id: upload.id, caller: .user("alice"))
            #expect(try FileStoreTests.content(store, object) == [1, 2, 3, 4, 5, 6])

            // A signed-out upload is not tied to its address (networks change mid-upload), but
            // a signed-in user may not take it over.
            let anonymous = try await store.startUpload(
                bucket: Self.bucket, name: "drop/a.bin", fields: ObjectFields(), owner: .signedOut(address: "192.0.2.1"))
            #expect(try await store.upload(id: anonymous.id, for: .signedOut(address: "198.51.100.7")) != nil)
            #expect(try await store.upload(id: anonymous.id, for: .user("bob")) == nil)
            #expect(Self.files(directory, "uploads") == [anonymous.id])
        }
    }

    @Test func anOwnerSurvivesTheRecord() {
        for owner in [UploadOwner.admin, .user("alice:with:colons"), .signedOut(address: "2001:db8::1")] {
            #expect(UploadOwner(text: owner.text) == owner)
        }
        #expect(UploadOwner(text: "someone") == nil)
    }

    // MARK: - Held to the declared size

    @Test func aChunkPastTheDeclaredSizeIsRefusedBeforeTheExcessIsWritten() async throws {
        try await Self.withStore { (store: FileStore, directory: TemporaryDirectory) async throws in
            let upload = try await store.startUpload(bucket: Self.bucket, name: "a.bin", fields: ObjectFields(), declaredSize: 2500)
            // A chunk whose length says it would pass the declared size: not read at all.
            let body = UntouchedBody()
            await #expect(throws: FilesError.overDeclaredSize(2500)) {
                try await store.appendChunk(id: upload.id, offset: 0, length: 2501, body: body)
            }
            #expect(!body.read)
            // One that does not say: what fits is kept, the piece that would pass is not written.
            await #expect(throws: FilesError.overDeclaredSize(2500)) {
                try await store.appendChunk(id: upload.id, offset: 0, body: FileStoreTests.body(FileStoreTests.bytes(3000)))
            }
            #expect(try await store.upload(id: upload.id)?.received == 2000)
            _ = try await store.appendChunk(id: upload.id, offset: 2000, body: FileStoreTests.body(FileStoreTests.bytes(500)))
            #expect(try await store.finishUpload(id: upload.id).size == 2500)

            // Without a declared size, the largest object is the bound.
            let open = try await store.startUpload(bucket: Self.bucket, name: "b.bin", fields: ObjectFields())
            await #expect(throws: FilesError.tooLarge(limit: 1 << 20)) {
                try await store.appendChunk(id: open.id, offset: 0, length: (1 << 20) + 1, body: UntouchedBody())
            }
            #expect(Self.files(directory, "tmp").isEmpty)
        }
    }

    // MARK: - Limits

    @Test func openUploadsAreLimitedPerOwnerAndInAll() async throws {
        let limits = UploadLimits(maxOpenPerOwner: 2, maxOpen: 4)
        try await Self.withStore(limits: limits) { (store: FileStore, directory: TemporaryDirectory) async throws in
            func start(_ owner: UploadOwner) async throws -> UploadSession {
                try await store.startUpload(bucket: Self.bucket, name: "a.bin", fields: ObjectFields(), owner: owner)
            }
            let first = try await start(.user("alice"))
            _ = try await start(.user("alice"))
            await #expect(throws: FilesError.tooManyUploads) { try await start(.user("alice")) }
            // Finishing or cancelling one frees its place.
            try await store.cancelUpload(id: first.id, caller: .user("alice"))
            _ = try await start(.user("alice"))
            // Signed-out clients are counted by address.
            _ = try await start(.signedOut(address: "192.0.2.1"))
            _ = try await start(.signedOut(address: "192.0.2.1"))
            await #expect(throws: FilesError.uploadsFull) { try await start(.signedOut(address: "192.0.2.2")) }
            // The admin is not counted per owner, but the server's limit holds for everyone.
            await #expect(throws: FilesError.uploadsFull) { try await start(.admin) }
            #expect(Self.files(directory, "uploads").count == 4)
        }
    }

    @Test func unfinishedUploadsHoldNoMoreThanThePendingBytes() async throws {
        let limits = UploadLimits(maxPendingBytes: 5000)
        try await Self.withStore(limits: limits) { (store: FileStore, directory: TemporaryDirectory) async throws in
            let upload = try await store.startUpload(bucket: Self.bucket, name: "a.bin", fields: ObjectFields())
            _ = try await store.appendChunk(id: upload.id, offset: 0, body: FileStoreTests.body(FileStoreTests.bytes(4000)))
            #expect(store.pendingBytes == 4000)
            // A simple upload streaming meanwhile counts too: refused when it would pass.
            await #expect(throws: FilesError.uploadsFull) {
                try await store.upload(bucket: Self.bucket, name: "b.bin", fields: ObjectFields(), body: FileStoreTests.body(FileStoreTests.bytes(2000)))
            }
            #expect(Self.files(directory, "tmp").isEmpty)
            #expect(store.pendingBytes == 4000)
            let small = try await store.upload(bucket: Self.bucket, name: "c.bin", fields: ObjectFields(), body: FileStoreTests.body(FileStoreTests.bytes(1000)))
            #expect(small.size == 1000)
            // A finished object no longer counts.
            #expect(store.pendingBytes == 4000)
            await #expect(throws: FilesError.uploadsFull) {
                try await store.appendChunk(id: upload.id, offset: 4000, body: FileStoreTests.body(FileStoreTests.bytes(1001)))
            }
            #expect(try await store.upload(id: upload.id)?.received == 5000)
            _ = try await store.finishUpload(id: upload.id)
            #expect(store.pendingBytes == 0)
        }
    }

    // MARK: - Expiry

    @Test func idleAndOldUploadsAreRemovedWhileRunning() async throws {
        let clock = TestClock()
        let limits = UploadLimits(lifetime: 10_000, idleLifetime: 1_000)
        try await Self.withStore(limits: limits, clock: clock) { (store: FileStore, directory: TemporaryDirectory) async throws in
            let idle = try await store.startUpload(bucket: Self.bucket, name: "idle.bin", fields: ObjectFields())
            _ = try await store.appendChunk(id: idle.id, offset: 0, body: FileStoreTests.body([1, 2, 3]))
            let busy = try await store.startUpload(bucket: Self.bucket, name: "busy.bin", fields: ObjectFields())
            clock.advance(by: 900)
            #expect(try await store.removeExpiredUploads() == FileStore.ExpiredUploads(pendingBytes: 3))
            // A chunk keeps an upload alive; the other has been idle for the whole bound.
            _ = try await store.appendChunk(id: busy.id, offset: 0, body: FileStoreTests.body([4]))
            clock.advance(by: 100)
            #expect(try await store.removeExpiredUploads() == FileStore.ExpiredUploads(uploads: 1, bytes: 3, pendingBytes: 1))
            #expect(try await store.upload(id: idle.id) == nil)
            #expect(Self.files(directory, "uploads") == [busy.id])
            // However busy, an upload lasts no longer than its lifetime.
            for offset in 1...10 {
                clock.advance(by: 999)
                _ = try await store.appendChunk(id: busy.id, offset: Int64(offset), body: FileStoreTests.body([4]))
                try await store.removeExpiredUploads()
            }
            #expect(try await store.upload(id: busy.id) == nil)
            #expect(Self.files(directory, "uploads").isEmpty)
            #expect(store.pendingBytes == 0)
        }
    }
}
