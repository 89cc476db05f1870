import HearthCore

/// The retention job for posts: those older than the operator's limit go, each with everything
/// a post's removal takes (``PostRemoval``), a chunk at a time so one run never holds much.
struct PostRetention: Sendable {
    let data: any SocialData
    let files: any SocialFiles
    /// Posts removed per write at most.
    let batch: Int

    /// Removes the posts published before `cutoff` (milliseconds since the epoch); returns how many.
    func removePosts(publishedBefore cutoff: Int64) async throws -> Int {
        var removed = 0
        while true {
            let old = try await data.value(at: .of("posts")).entries.filter { entry in
                (entry.value.at("timestamp").integerValue ?? .max) < cutoff
            }.prefix(batch)
            guard !old.isEmpty else { return removed }
            let posts = Dictionary(old.compactMap { entry in entry.value.at("author", "uid").string.map { (entry.key, $0) } }) { first, _ in first }
            let removal = PostRemoval(data: data, files: files)
            var changes = try await removal.changes(removing: posts)
            // A post without an author (not written by the app) goes alone.
            for entry in old where posts[entry.key] == nil { changes.delete(.of("posts", entry.key)) }
            for chunk in changes.chunks(of: 500) { try await data.update(chunk) }
            _ = try await removal.deletePhotos(of: posts)
            removed += old.count
        }
    }
}
