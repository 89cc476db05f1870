/// A database path pattern, as a function trigger names where it listens: literal keys,
/// `*` for any one key, and `{name}` (or `{name=*}`) for any one key captured as a parameter.
/// `posts/{postId}/text` matches `/posts/p1/text` with `postId = p1`.
///
/// This is the part of Eventarc's path patterns that Realtime Database triggers take (the
/// Firebase functions SDKs match an event's `ref` against the same pattern to fill in
/// `params`). A multi-key wildcard (`**`, `{name=**}`) is refused: a change would match it at
/// several depths at once, and Firebase's database triggers have no such events.
public struct PathPattern: Sendable, Hashable, CustomStringConvertible {
    /// One level of the pattern.
    public enum Segment: Sendable, Hashable {
        /// This key exactly.
        case literal(ChildKey)
        /// Any key; captured under the name when there is one.
        case wildcard(capture: String?)
    }

    /// The levels from the root down.
    public let segments: [Segment]

    /// Parses a pattern such as `/posts/{postId}/text`; leading, trailing and doubled slashes
    /// are ignored, so `/` and the empty string are the root.
    /// - Throws: ``HearthError`` (`invalidPath`) naming what is wrong: a key Firebase does not
    ///   allow, a malformed or repeated capture, a multi-key wildcard, or too many levels.
    public init(parsing text: String) throws(HearthError) {
        var segments: [Segment] = []
        var names: Set<String> = []
        for key in Path.keys(splitting: text) {
            let part = key.string
            if part == "*" {
                segments.append(.wildcard(capture: nil))
            } else if part.hasPrefix("{") || part.hasSuffix("}") {
                guard part.hasPrefix("{"), part.hasSuffix("}"), part.count > 2 else {
                    throw Self.invalid(text, "\(part) is not a capture: write {name}")
                }
                var inner = part.dropFirst().dropLast()
                if let equals = inner.firstIndex(of: "=") {
                    let wildcard = inner[inner.index(after: equals)...]
                    guard wildcard == "*" else {
                        throw Self.invalid(text, wildcard == "**"
                            ? "a database trigger's path cannot capture several keys (\(part))"
                            : "\(part) is not a capture: write {name} or {name=*}")
                    }
                    inner = inner[..<equals]
                }
                let name = String(inner)
                guard Self.isCaptureName(name) else {
                    throw Self.invalid(text, "\(part) is not a capture: a name is letters, digits and _, not starting with a digit")
                }
                guard names.insert(name).inserted else { throw Self.invalid(text, "{\(name)} is captured twice") }
                segments.append(.wildcard(capture: name))
            } else if part.contains("*") {
                throw Self.invalid(text, part == "**"
                    ? "a database trigger's path cannot match several keys at once (**)"
                    : "\(part) mixes * with other characters: a wildcard is a whole key")
            } else {
                guard Path.isValidKey(part) else {
                    throw Self.invalid(text, "\(part) is not a valid key: keys cannot contain . $ # [ ] / or control characters")
                }
                segments.append(.literal(key))
            }
        }
        guard segments.count <= Path.maxDepth else { throw Self.invalid(text, "it is deeper than \(Path.maxDepth) levels") }
        self.segments = segments
    }

    /// A pattern of these levels.
    public init(segments: [Segment]) {
        self.segments = segments
    }

    /// The parameters `path` gives the pattern's captures, or nil when it does not match.
    public func match(_ path: Path) -> [String: String]? {
        guard path.count == segments.count else { return nil }
        var parameters: [String: String] = [:]
        for (segment, key) in zip(segments, path.keys) {
            switch segment {
            case .literal(let literal): guard literal == key else { return nil }
            case .wildcard(let capture): if let capture { parameters[capture] = key.string }
            }
        }
        return parameters
    }

    /// The pattern as written in Firebase's form: `posts/{postId}/text`, no leading slash.
    public var description: String {
        segments.map { segment -> String in
            switch segment {
            case .literal(let key): return key.string
            case .wildcard(nil): return "*"
            case .wildcard(let name?): return "{\(name)}"
            }
        }.joined(separator: "/")
    }

    static func isCaptureName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { $0 == "_" || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) }
    }

    static func invalid(_ text: String, _ reason: String) -> HearthError {
        HearthError(.invalidPath, "Invalid path pattern \"\(text)\": \(reason).")
    }
}
