import Crypto
import HearthHosting
import NIOCore

/// One file of a hosted site as served: its bytes, its type, a strong ETag made from its bytes,
/// and, for text, its gzip and Brotli forms made once when it was read (each with an ETag of
/// its own, as a different representation must have).
struct HostedFile: Sendable {
    let bytes: ByteBuffer
    let contentType: String
    /// The first 128 bits of the bytes' SHA-256 in hex, quoted.
    let etag: String
    /// The compressed forms worth sending (smaller than the bytes), by coding.
    let encoded: [HostingCompression.Coding: ByteBuffer]

    /// Text larger than this is sent uncompressed (compressing it would hold a request too long).
    static let maxCompressedBytes = 8 << 20

    /// - Parameters:
    ///   - path: the file's path, whose extension gives its type.
    ///   - bytes: its content.
    init(path: String, bytes: [UInt8]) {
        self.bytes = ByteBuffer(bytes: bytes)
        contentType = HostingContentType.of(path)
        let hex = SHA256.hash(data: bytes).prefix(16).map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
        etag = "\"\(hex)\""
        var encoded: [HostingCompression.Coding: ByteBuffer] = [:]
        if HostingContentType.isCompressible(contentType), bytes.count <= Self.maxCompressedBytes {
            for coding in HostingCompression.Coding.allCases {
                if let compressed = HostingCompression.compress(bytes, with: coding) { encoded[coding] = ByteBuffer(bytes: compressed) }
            }
        }
        self.encoded = encoded
    }

    /// What the file costs the cache: its bytes and their compressed forms.
    var cost: Int { bytes.readableBytes + encoded.values.reduce(0) { $0 + $1.readableBytes } }

    /// The ETag of the form sent with `coding` (`"…-br"`).
    func etag(for coding: HostingCompression.Coding?) -> String {
        guard let coding else { return etag }
        return "\(etag.dropLast())-\(coding.rawValue)\""
    }
}
