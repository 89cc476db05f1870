import Foundation

/// An object as Cloud Storage's JSON API writes it (`storage#object`): numbers as strings,
/// times in RFC 3339, checksums in base64, links back to this server, and download tokens as
/// the custom metadata key Firebase keeps them under (`firebaseStorageDownloadTokens`).
///
/// Hearth keeps one version of an object: `generation` is the version of its content
/// (microseconds, increasing with every new content, as Cloud Storage's are) and
/// `metageneration` counts its metadata changes from 1.
public struct CloudObjectResource: Encodable, Sendable {
    public let kind = "storage#object"
    public let id: String
    public let selfLink: String
    public let mediaLink: String
    public let name: String
    public let bucket: String
    public let generation: String
    public let metageneration: String
    public let contentType: String
    public let storageClass = "STANDARD"
    public let size: String
    public let md5Hash: String
    public let crc32c: String?
    public let etag: String
    public let timeCreated: String
    public let updated: String
    public let timeStorageClassUpdated: String
    public let cacheControl: String?
    public let contentDisposition: String?
    public let contentEncoding: String?
    public let contentLanguage: String?
    public let metadata: [String: String]?

    /// `object` as seen from `base`, this server's `scheme://host[:port]` as the client reached it.
    public init(_ object: StoredObject, base: String) {
        let path = "b/\(Self.encoded(object.bucket))/o/\(Self.encoded(object.name))"
        id = "\(object.bucket)/\(object.name)/\(object.generation)"
        selfLink = "\(base)/storage/v1/\(path)"
        mediaLink = "\(base)/download/storage/v1/\(path)?generation=\(object.generation)&alt=media"
        name = object.name
        bucket = object.bucket
        generation = String(object.generation)
        metageneration = String(object.metageneration)
        contentType = object.contentType
        size = String(object.size)
        md5Hash = object.md5Hash
        crc32c = object.crc32c
        etag = object.etag
        timeCreated = Self.timestamp(object.timeCreated)
        updated = Self.timestamp(object.updated)
        timeStorageClassUpdated = timeCreated
        cacheControl = object.cacheControl
        contentDisposition = object.contentDisposition
        contentEncoding = object.contentEncoding
        contentLanguage = object.contentLanguage
        var metadata = object.customMetadata
        if !object.downloadTokens.isEmpty {
            metadata[StoredObject.downloadTokensKey] = object.downloadTokens.joined(separator: ",")
        }
        self.metadata = metadata.isEmpty ? nil : metadata
    }

    /// A time as Cloud Storage writes it: RFC 3339, UTC, with milliseconds.
    public static func timestamp(_ milliseconds: Int64) -> String {
        let date = Date(timeIntervalSince1970: TimeInterval(milliseconds) / 1000)
        return Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(date)
    }

    /// The JSON text of the resource (keys sorted).
    public func json() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array((try? encoder.encode(self)) ?? Data("{}".utf8))
    }

    /// A bucket or object name as one path segment (`/` too is encoded), as Google's links write it.
    public static func encoded(_ name: String) -> String {
        name.addingPercentEncoding(withAllowedCharacters: .urlPathSegmentAllowed) ?? name
    }
}

extension CharacterSet {
    /// Characters a path segment may hold unencoded (`/`, `?`, `#`, `%` … are encoded).
    public static let urlPathSegmentAllowed: CharacterSet = {
        var set = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        set.insert(charactersIn: "-._~")
        return set
    }()
}
