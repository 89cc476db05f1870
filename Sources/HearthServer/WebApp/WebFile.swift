import Crypto
import Foundation
import Hummingbird
import NIOCore

/// One file of the web front end as served: its bytes, its content type (by its extension, as
/// Hummingbird names them) and a strong ETag made from its bytes, so the same bytes get the same
/// ETag from any server, build or restart, and any change of a byte gets another.
struct WebFile: Sendable {
    let bytes: ByteBuffer
    let contentType: String?
    /// The first 128 bits of the bytes' SHA-256 in hex, quoted (`sha256sum` shows the same digits).
    let etag: String

    /// - Parameters:
    ///   - name: the file's name, whose extension gives its content type.
    ///   - bytes: its content.
    init(name: some StringProtocol, bytes: ByteBuffer) {
        self.bytes = bytes
        let digest = SHA256.hash(data: bytes.readableBytesView)
        etag = "\"\(digest.prefix(16).map { String(format: "%02x", $0) }.joined())\""
        let fileExtension = name.lastIndex(of: ".").map { name[name.index(after: $0)...] }
        contentType = fileExtension.flatMap { MediaType.getMediaType(forExtension: String($0))?.description }
    }
}
