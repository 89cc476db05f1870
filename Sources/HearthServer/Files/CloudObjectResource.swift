import Foundation
import HearthFiles

/// An object as Cloud Storage's JSON API writes it (`storage#object`): numbers as strings,
/// times in RFC 3339, checksums in base64, links back to this server, and download tokens as
/// the custom metadata key Firebase keeps them under (`firebaseStorageDownloadTokens`).
///
/// Hearth keeps one version of an object: `generation` is the version of its content
/// (microseconds, increasing with every new content, as Cloud Storage's are) and
/// `metageneration` counts its metadata changes from 1.
struct CloudObjectResource: Encodable {
    let kind = "storage#object"
    let id: String
    let selfLink: String
    let mediaLink: String
    let name: String
    let bucket: String
    let generation: String
    let metageneration: String
    let contentType: String
    let storageClass = "STANDARD"
    let size: String
    let md5Hash: String
    let crc32c: String?
    let etag: String
    let timeCreated: String
    let updated: String
    let timeStorageClassUpdated: String
    let cacheControl: String?
    let contentDisposition: String?
    let contentEncoding: String?
    let contentLanguage: String?
    let metadata: [String: String]?

    /// `object` as seen from `base`, this server's `scheme://host[:port]` as the client reached it.
    init(_ object: StoredObject, base: String) {
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
        timeCreated = ObjectResource.timestamp(object.timeCreated)
        updated = ObjectResource.timestamp(object.updated)
        timeStorageClassUpdated = timeCreated
        cacheControl = object.cacheControl
        contentDisposition = object.contentDisposition
        contentEncoding = object.contentEncoding
        contentLanguage = object.contentLanguage
        var metadata = object.customMetadata
        if !object.downloadTokens.isEmpty {
            metadata[FilesResponder.downloadTokensKey] = object.downloadTokens.joined(separator: ",")
        }
        self.metadata = metadata.isEmpty ? nil : metadata
    }

    /// A bucket or object name as one path segment (`/` too is encoded), as Google's links write it.
    static func encoded(_ name: String) -> String {
        name.addingPercentEncoding(withAllowedCharacters: .urlPathSegmentAllowed) ?? name
    }
}

extension CharacterSet {
    /// Characters a path segment may hold unencoded (`/`, `?`, `#`, `%` … are encoded).
    static let urlPathSegmentAllowed: CharacterSet = {
        var set = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        set.insert(charactersIn: "-._~")
        return set
    }()
}
