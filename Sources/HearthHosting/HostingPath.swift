/// A request's URL path made safe to match and to look up as a file: percent-decoded once,
/// with repeated slashes made one and `.` / `..` segments resolved.
///
/// Refused (``normalize(_:)`` returns nil, and the server answers 400): an encoded slash
/// (`%2F`, which would name a file across folders that the URL does not show), an encoded
/// backslash, a NUL, an invalid percent escape or UTF-8, a path not starting with `/`, and
/// `..` that would climb above the site's root.
public enum HostingPath {
    /// The longest path accepted (matching costs grow with it).
    public static let maxLength = 4096

    /// The decoded, normalized form of the raw (still percent-encoded) `path`, keeping a
    /// trailing slash; nil when it is refused.
    public static func normalize(_ path: some StringProtocol) -> String? {
        guard path.first == "/", path.utf8.count <= maxLength else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(path.utf8.count)
        var iterator = Array(path.utf8)[...]
        while let byte = iterator.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard iterator.count >= 2, let high = hexValue(iterator.removeFirst()), let low = hexValue(iterator.removeFirst()) else {
                return nil
            }
            let decoded = high << 4 | low
            // A slash or backslash in a name would cross folders the URL does not show.
            guard decoded != UInt8(ascii: "/"), decoded != UInt8(ascii: "\\") else { return nil }
            bytes.append(decoded)
        }
        guard !bytes.contains(0), let decoded = String(validating: bytes, as: UTF8.self) else { return nil }
        var segments: [Substring] = []
        let parts = decoded.split(separator: "/", omittingEmptySubsequences: true)
        for part in parts {
            switch part {
            case ".": continue
            case "..":
                guard !segments.isEmpty else { return nil }
                segments.removeLast()
            default: segments.append(part)
            }
        }
        let trailing = decoded.hasSuffix("/") || decoded.hasSuffix("/.") || decoded.hasSuffix("/..")
        let joined = "/" + segments.joined(separator: "/")
        return trailing && !segments.isEmpty ? joined + "/" : joined
    }

    /// Whether `path` is `root` or inside it, both absolute and already resolved (symbolic links
    /// followed, as `realpath` gives them): the server's check that a file it is about to send
    /// has not been linked in from outside the public folder.
    public static func isInside(_ path: String, root: String) -> Bool {
        let root = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
        let pathParts = path.split(separator: "/", omittingEmptySubsequences: true)
        let rootParts = root.split(separator: "/", omittingEmptySubsequences: true)
        guard path.hasPrefix("/"), root.hasPrefix("/"), !pathParts.contains(".."), !rootParts.contains("..") else { return false }
        return pathParts.count >= rootParts.count && zip(pathParts, rootParts).allSatisfy { $0 == $1 }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
