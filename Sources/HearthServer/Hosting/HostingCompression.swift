import CBrotli
import Foundation
import CZlib

/// gzip (zlib) and Brotli (the system's encoder) for hosted text files: compressed once and
/// kept with the file (``HostedFileCache``), never per request.
enum HostingCompression {
    /// A content coding the server can send.
    enum Coding: String, Sendable, CaseIterable {
        case brotli = "br"
        case gzip
    }

    /// Smaller files are sent as they are: the coding's own overhead eats the gain.
    static let minimumBytes = 256

    /// The coding to answer `acceptEncoding` with: Brotli, then gzip, when the client accepts
    /// it (a `q=0` refuses one); nil for the identity.
    static func preferred(_ acceptEncoding: String?) -> Coding? {
        guard let acceptEncoding else { return nil }
        var accepted: [String: Double] = [:]
        for item in acceptEncoding.split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let name = parts.first, !name.isEmpty else { continue }
            var quality = 1.0
            for parameter in parts.dropFirst() where parameter.hasPrefix("q=") {
                quality = Double(parameter.dropFirst(2)) ?? 0
            }
            accepted[name] = quality
        }
        for coding in Coding.allCases {
            if let quality = accepted[coding.rawValue] ?? accepted["*"], quality > 0 { return coding }
        }
        return nil
    }

    /// `bytes` compressed with `coding`, or nil when that would not make them smaller.
    static func compress(_ bytes: [UInt8], with coding: Coding) -> [UInt8]? {
        guard bytes.count >= minimumBytes else { return nil }
        let compressed = coding == .brotli ? brotli(bytes) : gzip(bytes)
        guard let compressed, compressed.count < bytes.count else { return nil }
        return compressed
    }

    /// gzip at zlib's level 9 (files are compressed once).
    static func gzip(_ bytes: [UInt8]) -> [UInt8]? {
        var stream = z_stream()
        // 15 window bits, plus 16 for the gzip wrapper.
        guard deflateInit2_(&stream, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { return nil }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(bytes.count))))
        let result: Int32 = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard result == Z_STREAM_END else { return nil }
        return Array(output.prefix(Int(stream.total_out)))
    }

    /// Brotli, at its best quality for small files and a quicker one for large ones.
    static func brotli(_ bytes: [UInt8]) -> [UInt8]? {
        var size = BrotliEncoderMaxCompressedSize(bytes.count)
        guard size > 0 else { return nil }
        var output = [UInt8](repeating: 0, count: size)
        let quality: Int32 = bytes.count <= 1 << 20 ? 11 : 6
        let done = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                BrotliEncoderCompress(quality, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_TEXT, input.count, input.baseAddress, &size, out.baseAddress)
            }
        }
        guard done == BROTLI_TRUE else { return nil }
        return Array(output.prefix(size))
    }
}
