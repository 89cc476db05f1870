import Foundation

/// A file in storage: where it is, what it holds and its metadata, in the terms of Firebase
/// Storage's object resource.
public struct StoredObject: Sendable, Equatable {
    /// The custom metadata key Firebase keeps download tokens under.
    public static let downloadTokensKey = "firebaseStorageDownloadTokens"

    /// The bucket the object is in.
    public var bucket: String
    /// The object's full path in the bucket, such as `alice/full/p1/photo.jpg`.
    public var name: String
    /// The size in bytes.
    public var size: Int64
    public var contentType: String
    /// The MD5 of the content, base64 (as Cloud Storage gives it).
    public var md5Hash: String
    /// The CRC-32C of the content, its four bytes big-endian in base64 (as Cloud Storage gives
    /// it); nil for an object stored before Hearth kept it.
    public var crc32c: String?
    /// Changes with every new content (microseconds since the epoch, increasing).
    public var generation: Int64
    /// Counts metadata changes of one generation, from 1.
    public var metageneration: Int64
    /// Milliseconds since the epoch.
    public var timeCreated: Int64
    public var updated: Int64
    public var cacheControl: String?
    public var contentDisposition: String?
    public var contentEncoding: String?
    public var contentLanguage: String?
    /// The developer's own metadata (`customMetadata` in the Firebase SDKs).
    public var customMetadata: [String: String]
    /// Tokens that let anyone holding one download the object, rules aside.
    public var downloadTokens: [String]
    /// The file holding the content, relative to the store's blob folder (a name Hearth made).
    public var blob: String

    public init(
        bucket: String, name: String, size: Int64, contentType: String, md5Hash: String, crc32c: String? = nil, generation: Int64,
        metageneration: Int64 = 1, timeCreated: Int64, updated: Int64, cacheControl: String? = nil,
        contentDisposition: String? = nil, contentEncoding: String? = nil, contentLanguage: String? = nil,
        customMetadata: [String: String] = [:], downloadTokens: [String] = [], blob: String
    ) {
        self.bucket = bucket
        self.name = name
        self.size = size
        self.contentType = contentType
        self.md5Hash = md5Hash
        self.crc32c = crc32c
        self.generation = generation
        self.metageneration = metageneration
        self.timeCreated = timeCreated
        self.updated = updated
        self.cacheControl = cacheControl
        self.contentDisposition = contentDisposition
        self.contentEncoding = contentEncoding
        self.contentLanguage = contentLanguage
        self.customMetadata = customMetadata
        self.downloadTokens = downloadTokens
        self.blob = blob
    }

    /// The ETag of this content and metadata version.
    public var etag: String {
        let text = "\(generation)/\(metageneration)"
        return Data(text.utf8).base64EncodedString()
    }
}

/// The metadata a client gives when it uploads or updates an object; nil leaves a field as it is
/// (or unset, for a new object).
public struct ObjectFields: Sendable, Equatable, Codable {
    public var contentType: String?
    public var cacheControl: String?
    public var contentDisposition: String?
    public var contentEncoding: String?
    public var contentLanguage: String?
    /// Custom metadata to merge: a nil value removes that key.
    public var customMetadata: [String: String?]?
    /// The download tokens a new object gets (Firebase's `firebaseStorageDownloadTokens`, as
    /// Cloud Storage's clients set them); nil: one new token.
    public var downloadTokens: [String]?

    public init(
        contentType: String? = nil, cacheControl: String? = nil, contentDisposition: String? = nil,
        contentEncoding: String? = nil, contentLanguage: String? = nil, customMetadata: [String: String?]? = nil,
        downloadTokens: [String]? = nil
    ) {
        self.contentType = contentType
        self.cacheControl = cacheControl
        self.contentDisposition = contentDisposition
        self.contentEncoding = contentEncoding
        self.contentLanguage = contentLanguage
        self.customMetadata = customMetadata
        self.downloadTokens = downloadTokens
    }
}
