/// The checksums a client says its content has (Cloud Storage's `md5Hash` and `crc32c` in an
/// upload's metadata, or `X-Goog-Hash` on a resumable upload's last chunk): content that
/// arrives with others is refused before it becomes the object.
public struct ExpectedDigests: Sendable, Equatable {
    /// The MD5, base64.
    public var md5: String?
    /// The CRC-32C, its four bytes big-endian in base64.
    public var crc32c: String?

    public init(md5: String? = nil, crc32c: String? = nil) {
        self.md5 = md5
        self.crc32c = crc32c
    }

    /// Throws unless `object`'s content has these checksums; an object whose content has not
    /// arrived yet (no MD5: an upload judged by what it declares) passes.
    /// - Throws: 400, in Cloud Storage's words.
    public func check(_ object: StoredObject) throws(FilesError) {
        guard !object.md5Hash.isEmpty else { return }
        if let md5, md5 != object.md5Hash {
            throw .badRequest("Provided MD5 hash \"\(md5)\" doesn't match calculated MD5 hash \"\(object.md5Hash)\".")
        }
        if let crc32c, let actual = object.crc32c, crc32c != actual {
            throw .badRequest("Provided CRC32C \"\(crc32c)\" doesn't match calculated CRC32C \"\(actual)\".")
        }
    }
}
