import Foundation

/// Where the ``PostQueue`` keeps waiting posts on this device: a folder per person, and in it a
/// folder per post with `post.json` and its photos (`0-full`, `0-thumb`, …). A post is written
/// to a hidden folder first and renamed into place, so a crash never leaves half a post that
/// would be sent.
struct PostQueueStore: Sendable {
    let folder: URL

    private static let entryName = "post.json"
    private static let incomingPrefix = ".incoming-"

    private func personFolder(_ uid: String) -> URL {
        folder.appendingPathComponent(Self.safeName(uid), isDirectory: true)
    }

    private func postFolder(_ post: QueuedPost) -> URL {
        personFolder(post.uid).appendingPathComponent(Self.safeName(post.id), isDirectory: true)
    }

    /// A uid or push ID as a file name: they are letters, digits, `-` and `_` already; anything
    /// else (a custom uid) is percent-encoded so it cannot leave the folder.
    private static func safeName(_ name: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-_")
        let encoded = name.addingPercentEncoding(withAllowedCharacters: allowed) ?? "_"
        return encoded.isEmpty || encoded.hasPrefix(".") ? "_\(encoded)" : encoded
    }

    private static func photoFile(_ folder: URL, _ index: Int, thumbnail: Bool) -> URL {
        folder.appendingPathComponent("\(index)-\(thumbnail ? "thumb" : "full")")
    }

    /// The posts `uid` has waiting, oldest first. Half-written ones (a crash while keeping
    /// them) are removed; unreadable ones are skipped.
    func posts(of uid: String) -> [QueuedPost] {
        let manager = FileManager.default
        let person = personFolder(uid)
        guard let names = try? manager.contentsOfDirectory(atPath: person.path) else { return [] }
        var posts: [QueuedPost] = []
        for name in names {
            let postFolder = person.appendingPathComponent(name, isDirectory: true)
            if name.hasPrefix(Self.incomingPrefix) {
                try? manager.removeItem(at: postFolder)
                continue
            }
            guard let data = try? Data(contentsOf: postFolder.appendingPathComponent(Self.entryName)),
                var post = try? JSONDecoder().decode(QueuedPost.self, from: data), post.uid == uid
            else { continue }
            post.thumbnailFiles = post.photos.indices.map { Self.photoFile(postFolder, $0, thumbnail: true) }
            posts.append(post)
        }
        return posts.sorted { ($0.queuedAt, $0.id) < ($1.queuedAt, $1.id) }
    }

    /// Keeps `post` with its photos' bytes (`full`, `thumbnail` in order).
    func keep(_ post: QueuedPost, photos: [(full: Data, thumbnail: Data)]) throws -> QueuedPost {
        let manager = FileManager.default
        let final = postFolder(post)
        let incoming = personFolder(post.uid).appendingPathComponent(Self.incomingPrefix + Self.safeName(post.id), isDirectory: true)
        try? manager.removeItem(at: incoming)
        try manager.createDirectory(at: incoming, withIntermediateDirectories: true)
        do {
            for (index, photo) in photos.enumerated() {
                try photo.full.write(to: Self.photoFile(incoming, index, thumbnail: false))
                try photo.thumbnail.write(to: Self.photoFile(incoming, index, thumbnail: true))
            }
            try JSONEncoder().encode(post).write(to: incoming.appendingPathComponent(Self.entryName))
            try? manager.removeItem(at: final)
            try manager.moveItem(at: incoming, to: final)
        } catch {
            try? manager.removeItem(at: incoming)
            throw error
        }
        var kept = post
        kept.thumbnailFiles = post.photos.indices.map { Self.photoFile(final, $0, thumbnail: true) }
        return kept
    }

    /// The bytes of photo `index` of `post`.
    func photo(_ index: Int, of post: QueuedPost) throws -> (full: Data, thumbnail: Data) {
        let folder = postFolder(post)
        return (try Data(contentsOf: Self.photoFile(folder, index, thumbnail: false)),
                try Data(contentsOf: Self.photoFile(folder, index, thumbnail: true)))
    }

    func remove(_ post: QueuedPost) {
        try? FileManager.default.removeItem(at: postFolder(post))
    }
}
