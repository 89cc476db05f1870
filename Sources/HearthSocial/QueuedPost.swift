import Foundation

/// A post with photos made while the server could not be reached, waiting on this device in
/// the ``PostQueue`` to be sent: its text, and its photos' bytes in files beside it.
public struct QueuedPost: Codable, Equatable, Identifiable, Sendable {
    /// A photo of the post: its bytes are in the queue's files.
    public struct QueuedPhoto: Codable, Equatable, Sendable {
        public var contentType: String
        /// What the photo shows (blank for none).
        public var alt: String
    }

    /// The post's ID, chosen when it was queued: its files' paths follow from it, so sending
    /// again after an interruption uploads the same files and finds the post already written.
    public var id: String
    /// Who wrote it (only they send it).
    public var uid: String
    public var title: String
    public var body: String
    public var photos: [QueuedPhoto]
    /// When it was queued, in milliseconds since the epoch (the queue sends in that order).
    public var queuedAt: Int64
    /// The photos' thumbnails on this device, to show the post while it waits (set when read).
    public internal(set) var thumbnailFiles: [URL] = []

    enum CodingKeys: String, CodingKey {
        case id, uid, title, body, photos, queuedAt
    }

    /// The post as it is published: the author as they are when it is sent, and the storage
    /// paths its photos are uploaded to.
    func post(by author: Author) -> Post {
        Post(id: id, author: author, title: title, body: body, photos: photoPaths)
    }

    /// Its photos as published: where each is uploaded, and its alt text.
    var photoPaths: [Photo] {
        photos.enumerated().map { index, photo in
            let paths = Photo.paths(uid: uid, postID: id, index: index, contentType: photo.contentType)
            return Photo(full: paths.full, thumb: paths.thumb, alt: photo.alt.isEmpty ? nil : photo.alt)
        }
    }
}
