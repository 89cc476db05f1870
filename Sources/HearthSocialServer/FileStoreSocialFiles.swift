import HearthFiles

/// ``SocialFiles`` over the server's ``FileStore``: every bucket, page by page.
public struct FileStoreSocialFiles: SocialFiles {
    let store: FileStore

    public init(store: FileStore) {
        self.store = store
    }

    public func deleteAll(under prefix: String) async throws -> Int {
        var deleted = 0
        for bucket in try await store.buckets() {
            // Each page is listed afresh from the start: what was deleted is gone from it.
            while true {
                let page = try await store.list(bucket: bucket, prefix: prefix, maxResults: 500)
                for object in page.items { deleted += try await delete(object.name, in: bucket) ? 1 : 0 }
                if page.items.isEmpty || page.nextPageToken == nil { break }
            }
        }
        return deleted
    }

    public func delete(_ name: String) async throws {
        for bucket in try await store.buckets() { _ = try await delete(name, in: bucket) }
    }

    public func names(under prefix: String) async throws -> [String] {
        var names: [String] = []
        for bucket in try await store.buckets() {
            var token: String?
            repeat {
                let page = try await store.list(bucket: bucket, prefix: prefix, pageToken: token, maxResults: 1000)
                names += page.items.map(\.name)
                token = page.nextPageToken
            } while token != nil
        }
        return names
    }

    /// False when it was gone already (another run, or its owner, deleted it meanwhile).
    private func delete(_ name: String, in bucket: String) async throws -> Bool {
        do {
            try await store.delete(bucket: bucket, name: name)
            return true
        } catch let error as FilesError where error.kind == .notFound {
            return false
        }
    }
}
