import Foundation
import HearthEngine
import HearthFiles

/// An object's metadata as Firebase Storage's REST API writes it: numbers as strings, times
/// in RFC 3339, download tokens comma-separated.
struct ObjectResource: Encodable {
    let name: String
    let bucket: String
    let generation: String
    let metageneration: String
    let contentType: String
    let timeCreated: String
    let updated: String
    let storageClass = "STANDARD"
    let size: String
    let md5Hash: String
    let contentEncoding: String
    let contentDisposition: String
    let etag: String
    let cacheControl: String?
    let contentLanguage: String?
    let downloadTokens: String?
    let metadata: [String: String]?

    init(_ object: StoredObject) {
        name = object.name
        bucket = object.bucket
        generation = String(object.generation)
        metageneration = String(object.metageneration)
        contentType = object.contentType
        timeCreated = Self.timestamp(object.timeCreated)
        updated = Self.timestamp(object.updated)
        size = String(object.size)
        md5Hash = object.md5Hash
        contentEncoding = object.contentEncoding ?? "identity"
        // Without one of its own, the disposition downloads are served with.
        contentDisposition = object.contentDisposition
            ?? FileContentPolicy.presentation(name: object.name, contentType: object.contentType, storedDisposition: nil).disposition
        etag = object.etag
        cacheControl = object.cacheControl
        contentLanguage = object.contentLanguage
        downloadTokens = object.downloadTokens.isEmpty ? nil : object.downloadTokens.joined(separator: ",")
        metadata = object.customMetadata.isEmpty ? nil : object.customMetadata
    }

    static func timestamp(_ milliseconds: Int64) -> String {
        CloudObjectResource.timestamp(milliseconds)
    }

    /// The JSON text of `object`'s metadata.
    static func json(_ object: StoredObject) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return Array((try? encoder.encode(ObjectResource(object))) ?? Data("{}".utf8))
    }
}

extension CharacterSet {
    /// Characters RFC 5987 leaves unencoded in a `filename*` value.
    static let rfc5987: CharacterSet = {
        var set = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        set.insert(charactersIn: "!#$&+-.^_`|~")
        return set
    }()
}
