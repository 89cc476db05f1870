/// The checksums of an object's content, both base64 as Cloud Storage writes them.
public struct ContentDigests: Sendable, Equatable {
    public var md5: String
    /// CRC-32C, its four bytes big-endian.
    public var crc32c: String

    public init(md5: String, crc32c: String) {
        self.md5 = md5
        self.crc32c = crc32c
    }
}
