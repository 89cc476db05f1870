/// A glob as Firebase Hosting reads a `source` (the rules of minimatch, which Firebase's own
/// server, superstatic, uses):
///
/// - `*` matches any run of characters within one path segment, `?` one character, `[a-z]`,
///   `[!a]` / `[^a]` and `[[:alpha:]]` one character of a class; none of them matches `/`.
/// - `**` as a whole segment matches any number of segments, none included.
/// - `{a,b}` (nested, or a numeric range `{1..3}`) and the extglobs `@(a|b)` and `?(a|b)` are
///   expanded into alternatives.
/// - Wildcards do not match a name that starts with a dot (`/**` does not match `/.well-known/x`)
///   unless the segment of the pattern starts with a literal dot; ``Options/dotFiles`` lifts that.
/// - A source is made absolute: `**` is `/**`, `foo.html` is `/foo.html`; repeated slashes are
///   one, and a backslash is read as a slash (as Firebase's CLI does). A trailing slash on the
///   path is allowed when the pattern has none (`/about` matches `/about/`).
///
/// Refused, with a ``GlobPatternError``: negated patterns (`!…`) and the extglobs `!(…)`,
/// `*(…)` and `+(…)`, which Firebase documents nowhere and which would need backtracking.
///
/// Matching never backtracks without bound: states already tried are remembered, so a match costs
/// at most the pattern's length times the path's.
public struct GlobPattern: Sendable, CustomStringConvertible {
    /// How to read a pattern.
    public struct Options: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Wildcards also match names starting with a dot (the deploy's `ignore` list reads so).
        public static let dotFiles = Options(rawValue: 1)
        /// A whole segment `:name` captures one segment, `:name*` any number of segments,
        /// `:name+` at least one and `:name?` one or none (redirect sources).
        public static let captures = Options(rawValue: 2)
        /// The pattern and paths are relative to the public folder, with no leading slash
        /// (the `ignore` list); a backslash then escapes the next character.
        public static let relative = Options(rawValue: 4)
    }

    enum Segment: Sendable, Hashable {
        /// `**`.
        case globstar
        /// `:name` and its repeat mark.
        case capture(name: String, repeat: CaptureRepeat)
        case parts([Part])
    }

    enum CaptureRepeat: Sendable, Hashable {
        case one, zeroOrMore, oneOrMore, zeroOrOne
    }

    enum Part: Sendable, Hashable {
        case literal(Character)
        case anyCharacter
        case star
        case characterClass(GlobCharacterClass)
    }

    /// The pattern as written.
    public let pattern: String
    let options: Options
    /// The pattern's alternatives after expanding braces and extglobs, each split into segments.
    let alternatives: [[Segment]]

    /// The most alternatives braces and extglobs may expand into.
    static let maxAlternatives = 256

    /// Reads `pattern`.
    /// - Throws: ``GlobPatternError`` for a negated pattern, an unsupported extglob, an unknown
    ///   character class or too many alternatives.
    public init(_ pattern: String, options: Options = []) throws(GlobPatternError) {
        self.pattern = pattern
        self.options = options
        var text = Array(pattern)
        if text.first == "!" {
            throw GlobPatternError("negated patterns (starting with !) are not supported; list what to match instead")
        }
        if !options.contains(.relative) {
            text = text.map { $0 == "\\" ? "/" : $0 }
            if text.first != "/" { text.insert("/", at: 0) }
        }
        text = Self.collapsingSlashes(text)
        var expanded: [[Character]] = []
        try Self.expand(text, into: &expanded)
        alternatives = try expanded.map { alternative throws(GlobPatternError) in
            try Self.segments(of: alternative, options: options)
        }
    }

    public var description: String { pattern }

    /// The names of the pattern's `:name` captures, in order.
    public var captureNames: [String] {
        var names: [String] = []
        for alternative in alternatives {
            for case .capture(let name, _) in alternative where !names.contains(name) { names.append(name) }
        }
        return names
    }

    /// Whether `path` (a decoded, normalized URL path such as `/blog/a.html`, or a relative one for
    /// ``Options/relative``) matches.
    public func matches(_ path: String) -> Bool {
        captures(in: path) != nil
    }

    /// The values of the `:name` captures when `path` matches (empty when the pattern has none),
    /// or nil when it does not. A `:name*` capture joins its segments with `/`.
    public func captures(in path: String) -> [String: String]? {
        let file = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        for alternative in alternatives {
            var matcher = GlobMatcher(pattern: alternative, file: file, dotFiles: options.contains(.dotFiles))
            if matcher.match(0, 0) { return matcher.captured }
        }
        return nil
    }

    private static func collapsingSlashes(_ text: [Character]) -> [Character] {
        var out: [Character] = []
        out.reserveCapacity(text.count)
        for character in text where !(character == "/" && out.last == "/") { out.append(character) }
        return out
    }
}
