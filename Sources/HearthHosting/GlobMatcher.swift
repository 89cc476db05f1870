/// One attempt to match a path's segments against one alternative of a ``GlobPattern``.
///
/// A depth-first search over (pattern segment, path segment) states that remembers the states
/// that failed: captures never change whether a state matches (there are no backreferences), so
/// a failed state fails again and is not tried twice. A match costs at most the product of the
/// two lengths.
struct GlobMatcher {
    let pattern: [GlobPattern.Segment]
    let file: [String]
    let dotFiles: Bool
    private(set) var captured: [String: String] = [:]
    private var failed: Set<Int> = []

    init(pattern: [GlobPattern.Segment], file: [String], dotFiles: Bool) {
        self.pattern = pattern
        self.file = file
        self.dotFiles = dotFiles
    }

    /// Whether pattern segments from `p` on match path segments from `f` on.
    mutating func match(_ p: Int, _ f: Int) -> Bool {
        if p == pattern.count {
            // A trailing slash on the path is allowed where the pattern ends (minimatch's rule).
            return f == file.count || (f == file.count - 1 && file[f].isEmpty)
        }
        let state = p * (file.count + 1) + f
        if failed.contains(state) { return false }
        if attempt(p, f) { return true }
        failed.insert(state)
        return false
    }

    private mutating func attempt(_ p: Int, _ f: Int) -> Bool {
        switch pattern[p] {
        case .globstar:
            // Zero segments, then one more at a time; `**` never enters a hidden name.
            if match(p + 1, f) { return true }
            var end = f
            while end < file.count, isWildcardable(file[end]) {
                end += 1
                if match(p + 1, end) { return true }
            }
            return false
        case .capture(let name, let repeatMark):
            let available = file.count - f - (file.last?.isEmpty == true && file.count - f > 0 ? 1 : 0)
            var counts: [Int]
            switch repeatMark {
            case .one: counts = [1]
            case .zeroOrOne: counts = [1, 0]
            case .zeroOrMore: counts = Array((0...max(available, 0)).reversed())
            case .oneOrMore: counts = available >= 1 ? Array((1...available).reversed()) : []
            }
            // Greedy, as the path patterns these come from are.
            counts = counts.filter { $0 <= available }
            for count in counts {
                let taken = file[f..<(f + count)]
                guard taken.allSatisfy({ !$0.isEmpty }) else { continue }
                let previous = captured[name]
                captured[name] = taken.joined(separator: "/")
                if match(p + 1, f + count) { return true }
                captured[name] = previous
            }
            return false
        case .parts(let parts):
            guard f < file.count, Self.segment(file[f], matches: parts, dotFiles: dotFiles) else { return false }
            return match(p + 1, f + 1)
        }
    }

    /// Whether `**` may pass over a segment: not a hidden name (unless dot files match), not `.` or `..`.
    private func isWildcardable(_ segment: String) -> Bool {
        if segment == "." || segment == ".." { return false }
        return dotFiles || !segment.hasPrefix(".")
    }

    /// Whether one path segment matches one pattern segment's parts: the classic wildcard walk
    /// that returns to the last `*` on a mismatch (linear in practice, quadratic at worst).
    static func segment(_ name: String, matches parts: [GlobPattern.Part], dotFiles: Bool) -> Bool {
        let text = Array(name)
        if !dotFiles, text.first == ".", parts.first != .literal(".") { return false }
        var p = 0
        var i = 0
        var starP = -1
        var starI = 0
        while i < text.count {
            if p < parts.count, parts[p] == .star {
                starP = p
                starI = i
                p += 1
                continue
            }
            if p < parts.count, matches(parts[p], text[i]) {
                p += 1
                i += 1
                continue
            }
            guard starP >= 0 else { return false }
            p = starP + 1
            starI += 1
            i = starI
        }
        while p < parts.count, parts[p] == .star { p += 1 }
        return p == parts.count
    }

    private static func matches(_ part: GlobPattern.Part, _ character: Character) -> Bool {
        switch part {
        case .literal(let literal): return literal == character
        case .anyCharacter: return character != "/"
        case .star: return false
        case .characterClass(let characterClass): return characterClass.matches(character)
        }
    }
}
