import Foundation
import HearthFiles
import Testing

/// What every ``HearthFiles/FileMetadataStorage`` does, written once and checked against each
/// implementation (SQLite in HearthFilesTests, PostgreSQL in HearthClusterTests). Each case
/// starts from an empty store.
public enum FileMetadataBehaviour: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case anObjectIsRecordedWithAllItsFields
    case putReplacesAndGenerationsOnlyGrow
    case updateChangesInOneStep
    case deleteAsksFirst
    case rangesFollowByteOrder
    case referencedBlobsAreFound
    case uploadsAreRecordedFinishedAndForgotten
    case uploadsKeepTheirOwnerAreLimitedAndExpire
    case concurrentPutsOfOneNameLeaveNoContentBehind
    case concurrentUpdatesLoseNothing

    public var testDescription: String { rawValue }

    /// The bucket the checks use.
    public static let bucket = "hearth.appspot.com"

    /// Checks this behaviour on `store`, which must be empty.
    public func check(_ store: any FileMetadataStorage) async throws {
        switch self {
        case .anObjectIsRecordedWithAllItsFields: try await Self.anObjectIsRecordedWithAllItsFields(store)
        case .putReplacesAndGenerationsOnlyGrow: try await Self.putReplacesAndGenerationsOnlyGrow(store)
        case .updateChangesInOneStep: try await Self.updateChangesInOneStep(store)
        case .deleteAsksFirst: try await Self.deleteAsksFirst(store)
        case .rangesFollowByteOrder: try await Self.rangesFollowByteOrder(store)
        case .referencedBlobsAreFound: try await Self.referencedBlobsAreFound(store)
        case .uploadsAreRecordedFinishedAndForgotten: try await Self.uploadsAreRecordedFinishedAndForgotten(store)
        case .uploadsKeepTheirOwnerAreLimitedAndExpire: try await Self.uploadsKeepTheirOwnerAreLimitedAndExpire(store)
        case .concurrentPutsOfOneNameLeaveNoContentBehind: try await Self.concurrentPutsOfOneNameLeaveNoContentBehind(store)
        case .concurrentUpdatesLoseNothing: try await Self.concurrentUpdatesLoseNothing(store)
        }
    }

    /// A plain object named `name` whose content is in `blob`.
    public static func object(_ name: String, blob: String, generation: Int64 = 1_000, bucket: String = bucket) -> StoredObject {
        StoredObject(
            bucket: bucket, name: name, size: 3, contentType: "text/plain", md5Hash: "bWQ1", generation: generation,
            timeCreated: 1, updated: 1, downloadTokens: ["token-\(blob)"], blob: blob)
    }

    static func anObjectIsRecordedWithAllItsFields(_ store: any FileMetadataStorage) async throws {
        let full = StoredObject(
            bucket: bucket, name: "alice/full/p1/photo.jpg", size: 12_345, contentType: "image/jpeg", md5Hash: "abc==",
            crc32c: "yZRlqg==", generation: 1_700_000_000_000_000, metageneration: 3, timeCreated: 1_700_000_000_000, updated: 1_700_000_000_500,
            cacheControl: "public, max-age=60", contentDisposition: "inline", contentEncoding: "gzip", contentLanguage: "fr",
            customMetadata: ["b": "2", "a": "1, with a comma"], downloadTokens: ["t1", "t2"], blob: "blob-1")
        let (recorded, replaced) = try await store.put(full)
        #expect(recorded == full)
        #expect(replaced == nil)
        #expect(try await store.object(bucket: bucket, name: full.name) == full)
        #expect(try await store.object(bucket: bucket, name: "alice/full/p1") == nil)
        #expect(try await store.object(bucket: "other", name: full.name) == nil)
        // An object without a CRC-32C (stored before Hearth kept one) reads back without one.
        _ = try await store.put(object("x", blob: "blob-2", bucket: "b2"))
        #expect(try await store.object(bucket: "b2", name: "x")?.crc32c == nil)
        _ = try await store.put(object("y", blob: "blob-3", bucket: "b2"))
        #expect(try await store.count(bucket: bucket) == 1)
        #expect(try await store.count(bucket: "b2") == 2)
        #expect(try await store.count(bucket: "none") == 0)
        #expect(try await store.buckets() == ["b2", bucket])
    }

    static func putReplacesAndGenerationsOnlyGrow(_ store: any FileMetadataStorage) async throws {
        _ = try await store.put(object("a.txt", blob: "first", generation: 5_000))
        let second = object("a.txt", blob: "second", generation: 6_000)
        let (recorded, replaced) = try await store.put(second)
        #expect(recorded == second)
        #expect(replaced == "first")
        // A node whose clock is behind still makes a later generation.
        let (late, replacedAgain) = try await store.put(object("a.txt", blob: "third", generation: 4_000))
        #expect(late.generation == 6_001)
        #expect(replacedAgain == "second")
        #expect(try await store.object(bucket: bucket, name: "a.txt") == late)
        #expect(try await store.count(bucket: bucket) == 1)
    }

    static func updateChangesInOneStep(_ store: any FileMetadataStorage) async throws {
        let original = try await store.put(object("a.txt", blob: "b1")).object
        let updated = try await store.update(bucket: bucket, name: "a.txt") { existing in
            var changed = existing
            changed.contentType = "text/markdown"
            changed.customMetadata["k"] = "v"
            changed.metageneration += 1
            return changed
        }
        #expect(updated.metageneration == original.metageneration + 1)
        #expect(try await store.object(bucket: bucket, name: "a.txt") == updated)
        await #expect(throws: FilesError.notFound) { try await store.update(bucket: bucket, name: "missing") { $0 } }
        await #expect(throws: FilesError.permissionDenied) {
            try await store.update(bucket: bucket, name: "a.txt") { _ in throw FilesError.permissionDenied }
        }
        #expect(try await store.object(bucket: bucket, name: "a.txt") == updated)
    }

    static func deleteAsksFirst(_ store: any FileMetadataStorage) async throws {
        let stored = try await store.put(object("a.txt", blob: "b1")).object
        await #expect(throws: FilesError.permissionDenied) {
            try await store.delete(bucket: bucket, name: "a.txt") { _ in throw FilesError.permissionDenied }
        }
        #expect(try await store.object(bucket: bucket, name: "a.txt") == stored)
        #expect(try await store.delete(bucket: bucket, name: "a.txt") { _ in } == stored)
        #expect(try await store.object(bucket: bucket, name: "a.txt") == nil)
        await #expect(throws: FilesError.notFound) { try await store.delete(bucket: bucket, name: "a.txt") { _ in } }
    }

    static func rangesFollowByteOrder(_ store: any FileMetadataStorage) async throws {
        for name in ["b", "a/x", "a", "B", "é", "a0", "a/y", "ab"] { _ = try await store.put(object(name, blob: "blob-\(name)")) }
        _ = try await store.put(object("a", blob: "elsewhere", bucket: "other"))
        func names(after: String? = nil, from: String = "", before: String? = nil, limit: Int = 100) async throws -> [String] {
            try await store.objects(bucket: bucket, after: after, from: from, before: before, limit: limit).map(\.name)
        }
        // UTF-8 byte order, as SQLite compares: capitals first, "/" before digits, accents last.
        #expect(try await names() == ["B", "a", "a/x", "a/y", "a0", "ab", "b", "é"])
        #expect(try await names(from: "a") == ["a", "a/x", "a/y", "a0", "ab", "b", "é"])
        #expect(try await names(after: "a", from: "zzz") == ["a/x", "a/y", "a0", "ab", "b", "é"])
        #expect(try await names(from: "a/", before: "a0") == ["a/x", "a/y"])
        #expect(try await names(after: "a/x", before: "a0") == ["a/y"])
        #expect(try await names(from: "a", limit: 2) == ["a", "a/x"])
        #expect(try await names(after: "é").isEmpty)
    }

    static func referencedBlobsAreFound(_ store: any FileMetadataStorage) async throws {
        _ = try await store.put(object("a", blob: "b1"))
        _ = try await store.put(object("b", blob: "b2"))
        #expect(try await store.referencedBlobs(among: ["b1", "b3", "b2", "b4"]) == ["b1", "b2"])
        #expect(try await store.referencedBlobs(among: []).isEmpty)
        _ = try await store.put(object("a", blob: "b5"))
        #expect(try await store.referencedBlobs(among: ["b1", "b5"]) == ["b5"])
    }

    static func uploadsAreRecordedFinishedAndForgotten(_ store: any FileMetadataStorage) async throws {
        let fields = ObjectFields(contentType: "image/png", customMetadata: ["owner": "alice", "gone": nil])
        let first = UploadSession(
            id: "u1", bucket: bucket, name: "a.png", fields: fields, declaredSize: 100, received: 0, status: .active, createdAt: 1_000)
        let second = UploadSession(
            id: "u2", bucket: bucket, name: "b.png", fields: ObjectFields(), declaredSize: nil, received: 0, status: .active,
            createdAt: 2_000)
        try await store.addUpload(first)
        try await store.addUpload(second)
        #expect(try await store.upload(id: "u1") == first)
        #expect(try await store.upload(id: "u2") == second)
        #expect(try await store.upload(id: "u3") == nil)
        #expect(try await store.activeUploads(among: ["u1", "u2", "u3"]) == ["u1", "u2"])
        try await store.setUpload(id: "u1", status: .final, generation: 42)
        try await store.setUpload(id: "u2", status: .cancelled, generation: nil)
        #expect(try await store.upload(id: "u1")?.status == .final)
        #expect(try await store.upload(id: "u2")?.status == .cancelled)
        #expect(try await store.activeUploads(among: ["u1", "u2"]).isEmpty)
        try await store.removeUploads(createdAtOrBefore: 1_999)
        #expect(try await store.upload(id: "u1") == nil)
        #expect(try await store.upload(id: "u2") != nil)
        try await store.removeUploads(createdAtOrBefore: 2_000)
        #expect(try await store.upload(id: "u2") == nil)
    }

    static func uploadsKeepTheirOwnerAreLimitedAndExpire(_ store: any FileMetadataStorage) async throws {
        func session(_ id: String, _ owner: UploadOwner) -> UploadSession {
            UploadSession(
                id: id, bucket: bucket, name: "\(id).bin", fields: ObjectFields(), declaredSize: nil, received: 0, status: .active,
                createdAt: 1_000, owner: owner)
        }
        func add(_ id: String, _ owner: UploadOwner, maxPerOwner: Int = 2) async throws {
            try await store.addUpload(session(id, owner), maxPerOwner: maxPerOwner, maxTotal: 4)
        }
        try await add("a1", .user("alice"))
        try await add("a2", .user("alice"))
        await #expect(throws: FilesError.tooManyUploads) { try await add("a3", .user("alice")) }
        try await add("b1", .signedOut(address: "192.0.2.1"))
        // The admin is not counted per owner; the total counts everyone.
        try await add("x1", .admin, maxPerOwner: 0)
        await #expect(throws: FilesError.uploadsFull) { try await add("b2", .signedOut(address: "192.0.2.2")) }
        #expect(try await store.upload(id: "a3") == nil)
        #expect(try await store.upload(id: "a1") == session("a1", .user("alice")))
        #expect(try await store.upload(id: "b1")?.owner == .signedOut(address: "192.0.2.1"))
        // A finished upload frees its place.
        try await store.setUpload(id: "a1", status: .final, generation: 7)
        try await add("a3", .user("alice"))
        // Activity only moves forward.
        try await store.touchUpload(id: "a2", at: 5_000)
        try await store.touchUpload(id: "a2", at: 4_000)
        #expect(try await store.upload(id: "a2")?.lastActiveAt == 5_000)
        // Idle: the active uploads not active since, but those spared.
        let idle = try await store.removeUploads(createdAtOrBefore: 0, lastActiveAtOrBefore: 4_999, sparing: ["x1"])
        #expect(Set(idle) == ["a3", "b1"])
        #expect(try await store.upload(id: "a1")?.status == .final)
        #expect(try await store.upload(id: "a2") != nil)
        #expect(try await store.upload(id: "x1") != nil)
        // Old: whatever their status; only the active ones are handed back.
        let old = try await store.removeUploads(createdAtOrBefore: 1_000, lastActiveAtOrBefore: .min, sparing: [])
        #expect(Set(old) == ["a2", "x1"])
        #expect(try await store.upload(id: "a1") == nil)
    }

    /// Writers racing for one new name: one object stands, and every other content file is
    /// handed back as replaced exactly once, so none is left behind.
    static func concurrentPutsOfOneNameLeaveNoContentBehind(_ store: any FileMetadataStorage) async throws {
        let replaced = try await withThrowingTaskGroup(of: String?.self) { group in
            for index in 0..<8 {
                group.addTask { try await store.put(object("race.txt", blob: "blob-\(index)", generation: 1_000)).replacedBlob }
            }
            return try await group.reduce(into: [String]()) { if let blob = $1 { $0.append(blob) } }
        }
        let standing = try #require(try await store.object(bucket: bucket, name: "race.txt"))
        #expect(replaced.count == 7)
        #expect(Set(replaced + [standing.blob]) == Set((0..<8).map { "blob-\($0)" }))
        // Each write came after the one it replaced.
        #expect(standing.generation >= 1_007)
    }

    static func concurrentUpdatesLoseNothing(_ store: any FileMetadataStorage) async throws {
        let original = try await store.put(object("a.txt", blob: "b1")).object
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    _ = try await store.update(bucket: bucket, name: "a.txt") { existing in
                        var changed = existing
                        changed.metageneration += 1
                        return changed
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await store.object(bucket: bucket, name: "a.txt")?.metageneration == original.metageneration + 20)
    }
}
