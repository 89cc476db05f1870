import Foundation
import HearthClient
import Observation

/// Writing a new post: up to three photos (each a full image and a thumbnail, made by the
/// caller: UIKit, AppKit or a browser canvas, in the order chosen, each with optional alt text),
/// a title and a body, checked, uploaded and published in one atomic write. With a photo, the
/// title and body are optional; without one, both are needed. A post with photos made while the
/// server cannot be reached waits in the ``PostQueue`` and is sent when the connection is back
/// (one without photos waits in the database's own queue).
@MainActor
@Observable
public final class ComposeViewModel {
    /// A photo chosen for the post.
    public struct PhotoDraft: Sendable, Equatable {
        public var full: Data
        public var thumbnail: Data
        public var contentType: String
        /// What the photo shows, for people who cannot see it (blank for none).
        public var alt: String

        public init(full: Data, thumbnail: Data, contentType: String = "image/jpeg", alt: String = "") {
            self.full = full
            self.thumbnail = thumbnail
            self.contentType = contentType
            self.alt = alt
        }
    }

    public var title = ""
    public var body = ""
    public private(set) var photos: [PhotoDraft] = []
    public private(set) var errorMessage: String?
    public private(set) var isPosting = false
    /// Upload progress of the photos, from 0 to 1.
    public private(set) var progress: Double = 0
    /// The last post could not reach the server and waits on this device to be sent.
    public private(set) var wasQueued = false

    /// The largest full image and thumbnail the app's storage rules accept.
    public static let maxFullBytes = 5 * 1024 * 1024
    public static let maxThumbnailBytes = 1024 * 1024

    @ObservationIgnored private let client: SocialClient

    public init(client: SocialClient) {
        self.client = client
    }

    /// Why the post cannot be sent yet, or nil when it can.
    public var problem: String? {
        let title = title.trimmingCharacters(in: .whitespacesAndNewlines)
        let body = body.trimmingCharacters(in: .whitespacesAndNewlines)
        if photos.isEmpty && title.isEmpty && body.isEmpty { return "Add a photo, or say something." }
        if photos.isEmpty && title.isEmpty { return "Add a title." }
        if photos.isEmpty && body.isEmpty { return "Say something in the post." }
        if title.count > Post.maxTitleLength { return "The title is longer than \(Post.maxTitleLength) characters." }
        if body.count > Post.maxBodyLength { return "The post is longer than \(Post.maxBodyLength) characters." }
        if photos.contains(where: { $0.alt.trimmingCharacters(in: .whitespacesAndNewlines).count > Photo.maxAltLength }) {
            return "A photo's description is longer than \(Photo.maxAltLength) characters."
        }
        return nil
    }

    public var canPost: Bool { problem == nil && !isPosting }

    /// Adds a photo, if there is room and it is small enough.
    public func addPhoto(_ photo: PhotoDraft) {
        guard photos.count < Post.maxPhotos else { return errorMessage = "A post has at most \(Post.maxPhotos) photos." }
        guard photo.contentType.hasPrefix("image/") else { return errorMessage = "Only images can be added." }
        guard photo.full.count < Self.maxFullBytes else { return errorMessage = "That photo is larger than 5 MB." }
        guard photo.thumbnail.count < Self.maxThumbnailBytes else { return errorMessage = "That thumbnail is larger than 1 MB." }
        photos.append(photo)
        errorMessage = nil
    }

    public func removePhoto(at index: Int) {
        guard photos.indices.contains(index) else { return }
        photos.remove(at: index)
    }

    /// Moves the photo at `index` to `destination` (the first is the one lists show).
    public func movePhoto(from index: Int, to destination: Int) {
        guard photos.indices.contains(index), photos.indices.contains(destination), index != destination else { return }
        photos.insert(photos.remove(at: index), at: destination)
    }

    /// Describes the photo at `index` for people who cannot see it.
    public func setAlt(_ alt: String, forPhotoAt index: Int) {
        guard photos.indices.contains(index) else { return }
        photos[index].alt = alt
    }

    /// Uploads the photos (full image and thumbnail) and publishes the post. Offline (or when
    /// the server stops answering mid-way), a post with photos is queued instead (``wasQueued``).
    /// - Returns: the post, or nil when it could not be sent (see ``errorMessage``).
    @discardableResult
    public func post() async -> Post? {
        if let problem { errorMessage = problem; return nil }
        guard let author = client.author else { errorMessage = SocialError.notSignedIn.description; return nil }
        isPosting = true
        errorMessage = nil
        wasQueued = false
        progress = 0
        defer { isPosting = false }
        let id = client.database.root.child("posts").childByAutoId().key!
        let title = title.trimmingCharacters(in: .whitespacesAndNewlines)
        let body = body.trimmingCharacters(in: .whitespacesAndNewlines)
        if !photos.isEmpty && !client.database.isConnected { return await queue(id: id, title: title, body: body, author: author) }
        var stored: [Photo] = []
        do {
            let total = Double(photos.reduce(0) { $0 + $1.full.count + $1.thumbnail.count })
            var done = 0.0
            for (index, photo) in photos.enumerated() {
                let paths = Photo.paths(uid: author.uid, postID: id, index: index, contentType: photo.contentType)
                try await client.storage.reference(paths.full).putData(photo.full, contentType: photo.contentType)
                done += Double(photo.full.count)
                progress = total > 0 ? done / total : 1
                try await client.storage.reference(paths.thumb).putData(photo.thumbnail, contentType: photo.contentType)
                done += Double(photo.thumbnail.count)
                progress = total > 0 ? done / total : 1
                let alt = photo.alt.trimmingCharacters(in: .whitespacesAndNewlines)
                stored.append(Photo(full: paths.full, thumb: paths.thumb, alt: alt.isEmpty ? nil : alt))
            }
            let post = Post(id: id, author: author, title: title, body: body, photos: stored)
            try await PostActions(client: client).publish(post)
            progress = 1
            clear()
            return post
        } catch where !photos.isEmpty && !SocialError.isRefusal(error) {
            // The server stopped answering: the post waits (the files sent so far have the
            // queue's paths, and are sent again).
            return await queue(id: id, title: title, body: body, author: author)
        } catch {
            errorMessage = SocialError.words(for: error)
            // Nothing points at the uploaded files: remove them.
            await client.storage.removeFiles(of: stored)
            return nil
        }
    }

    private func queue(id: String, title: String, body: String, author: Author) async -> Post? {
        do {
            let queued = try await client.postQueue.add(id: id, title: title, body: body, photos: photos)
            clear()
            progress = 0
            wasQueued = true
            return queued.post(by: author)
        } catch {
            errorMessage = SocialError.words(for: error)
            return nil
        }
    }

    private func clear() {
        title = ""
        body = ""
        photos = []
    }
}
