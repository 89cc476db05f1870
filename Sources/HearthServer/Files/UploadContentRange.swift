import Foundation

/// The `Content-Range` of a chunk of a Cloud Storage JSON API resumable upload (pure):
/// `bytes 0-262143/*` (a chunk, total not known yet), `bytes 262144-300000/300001` (a chunk,
/// and the total), `bytes */300001` or `bytes */*` (no bytes: the client asks how far the
/// upload got, or, with the total, says it is complete).
struct UploadContentRange: Equatable {
    /// The chunk's first and last byte, or nil for none.
    var bytes: ClosedRange<Int64>?
    /// The upload's total size, when the client says it.
    var total: Int64?

    /// The chunk's length in bytes.
    var length: Int64 { bytes.map { $0.upperBound - $0.lowerBound + 1 } ?? 0 }

    /// Reads a header value; nil when it is not one of the forms above.
    init?(_ header: String) {
        let text = header.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = text.dropFirst("bytes ".count).trimmingCharacters(in: .whitespaces)
        let halves = spec.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        if halves[1] == "*" {
            total = nil
        } else {
            guard let total = Self.number(halves[1]) else { return nil }
            self.total = total
        }
        if halves[0] == "*" {
            bytes = nil
        } else {
            let ends = halves[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            guard ends.count == 2, let first = Self.number(ends[0]), let last = Self.number(ends[1]), first <= last else { return nil }
            if let total, last >= total { return nil }
            bytes = first...last
        }
    }

    init(bytes: ClosedRange<Int64>?, total: Int64?) {
        self.bytes = bytes
        self.total = total
    }

    /// A decimal number of at most 18 digits (no sign, no spaces).
    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.count <= 18, text.allSatisfy(\.isASCIIDigit) else { return nil }
        return Int64(text)
    }
}
