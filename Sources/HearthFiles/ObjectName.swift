/// Checks of the names clients give buckets and objects. Names are never used as file paths
/// (content lives in files named by Hearth), but names that could confuse a client, a shell or
/// a path join later are refused outright.
public enum ObjectName {
    /// Cloud Storage's limit on an object name, in UTF-8 bytes.
    public static let maxBytes = 1024

    /// `name` if Hearth stores objects under it, else the reason it does not.
    public static func validated(_ name: String) throws(FilesError) -> String {
        guard !name.isEmpty else { throw .invalidName("the name is empty") }
        guard name.utf8.count <= maxBytes else { throw .invalidName("longer than \(maxBytes) bytes") }
        for scalar in name.unicodeScalars where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
            _ = scalar
            throw .invalidName("control characters are not allowed")
        }
        guard !name.hasPrefix("/") else { throw .invalidName("it starts with /") }
        // Segments end at the "/" scalar (a "/" with a combining mark after it is one Character).
        for segment in name.unicodeScalars.split(separator: "/", omittingEmptySubsequences: false) {
            if segment.isEmpty { throw .invalidName("it has an empty segment (//) or ends with /") }
            if segment.elementsEqual(".".unicodeScalars) || segment.elementsEqual("..".unicodeScalars) {
                throw .invalidName("'.' and '..' segments are not allowed")
            }
        }
        return name
    }

    /// `bucket` if it is a bucket name Hearth accepts: 3–222 of `a-z`, `0-9`, `-`, `_` and `.`,
    /// starting and ending with a letter or digit.
    public static func validatedBucket(_ bucket: String) throws(FilesError) -> String {
        let bytes = Array(bucket.utf8)
        guard (3...222).contains(bytes.count) else { throw .invalidBucket }
        func isAlphanumeric(_ byte: UInt8) -> Bool {
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
        }
        guard isAlphanumeric(bytes[0]), isAlphanumeric(bytes[bytes.count - 1]) else { throw .invalidBucket }
        for byte in bytes where !isAlphanumeric(byte) && byte != UInt8(ascii: "-") && byte != UInt8(ascii: "_") && byte != UInt8(ascii: ".") {
            throw .invalidBucket
        }
        return bucket
    }

    /// A content type Hearth accepts: `type/subtype` with optional parameters, printable ASCII.
    public static func validatedContentType(_ contentType: String) throws(FilesError) -> String {
        let trimmed = contentType.trimmingSpaces
        guard !trimmed.isEmpty, trimmed.utf8.count <= 256,
            trimmed.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F })
        else { throw .badRequest("Invalid content type: \(contentType.debugDescription).") }
        // Not omitting empty pieces: ";" alone must be refused, not split into nothing.
        let essence = trimmed.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let parts = essence.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].trimmingSpaces.isEmpty, !parts[1].trimmingSpaces.isEmpty,
            !essence.contains(" ")
        else { throw .badRequest("Invalid content type: \(contentType.debugDescription).") }
        return trimmed
    }
}

extension StringProtocol {
    var trimmingSpaces: String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}
