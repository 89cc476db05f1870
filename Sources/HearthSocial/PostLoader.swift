import Foundation
import HearthClient

/// Reads posts by ID (for lists of references: the feed, saved posts, a hashtag), several at
/// once, skipping those that no longer exist.
struct PostLoader: Sendable {
    let client: SocialClient

    /// The posts that exist among `ids`, in the order given.
    func posts(_ ids: [String]) async throws -> [Post] {
        let root = client.database.root
        return try await withThrowingTaskGroup(of: (Int, Post?).self) { group in
            for (index, id) in ids.enumerated() {
                group.addTask { (index, try await root.child("posts/\(id)").getData().decoded(Post.self)) }
            }
            var found: [(Int, Post)] = []
            for try await (index, post) in group {
                if let post { found.append((index, post)) }
            }
            return found.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }
}
