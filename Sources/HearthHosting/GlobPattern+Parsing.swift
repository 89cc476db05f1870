extension GlobPattern {
    /// Appends to `out` every alternative of `text` with its first brace or extglob group
    /// expanded, recursively (groups to its right are expanded by the recursion).
    static func expand(_ text: [Character], into out: inout [[Character]]) throws(GlobPatternError) {
        var index = 0
        while index < text.count {
            let character = text[index]
            let next: Character? = index + 1 < text.count ? text[index + 1] : nil
            switch character {
            case "\\":
                index += 2
                continue
            case "[":
                // A class is taken whole: `[{]` is not a brace.
                index = classEnd(text, from: index).map { $0 + 1 } ?? index + 1
                continue
            case "{":
                if let (end, alternatives) = braceGroup(text, from: index) {
                    for alternative in alternatives {
                        try expand(Array(text[..<index]) + alternative + Array(text[(end + 1)...]), into: &out)
                        if out.count > maxAlternatives { throw tooManyAlternatives }
                    }
                    return
                }
            case "@" where next == "(", "?" where next == "(":
                if let (end, alternatives) = group(text, from: index + 1, open: "(", close: ")", separator: "|") {
                    // `?(a|b)`: one of them or nothing.
                    let choices = character == "?" ? [[]] + alternatives : alternatives
                    for alternative in choices {
                        try expand(Array(text[..<index]) + alternative + Array(text[(end + 1)...]), into: &out)
                        if out.count > maxAlternatives { throw tooManyAlternatives }
                    }
                    return
                }
            case "!" where next == "(", "+" where next == "(", "*" where next == "(":
                throw GlobPatternError(
                    "the extglob \(character)(…) is not supported; use @(a|b), ?(a|b) or {a,b}, or a regex source")
            default:
                break
            }
            index += 1
        }
        out.append(text)
    }

    private static var tooManyAlternatives: GlobPatternError {
        GlobPatternError("braces and extglobs expand into more than \(maxAlternatives) patterns")
    }

    /// The index of the `]` closing the class opened at `start`, or nil when it is not closed
    /// (then the `[` is a literal, as in minimatch).
    static func classEnd(_ text: [Character], from start: Int) -> Int? {
        var index = start + 1
        if index < text.count, text[index] == "!" || text[index] == "^" { index += 1 }
        if index < text.count, text[index] == "]" { index += 1 }  // `[]a]`: a leading `]` is a member
        while index < text.count {
            switch text[index] {
            case "\\": index += 2
            case "[" where index + 1 < text.count && text[index + 1] == ":":
                // `[:alpha:]` inside a class.
                var end = index + 2
                while end + 1 < text.count, !(text[end] == ":" && text[end + 1] == "]") { end += 1 }
                index = end + 2
            case "]": return index
            default: index += 1
            }
        }
        return nil
    }

    /// A `{…}` group at `start`: its end and alternatives, or nil when it is not one (no comma
    /// and no range: minimatch keeps such braces as written).
    private static func braceGroup(_ text: [Character], from start: Int) -> (Int, [[Character]])? {
        guard let (end, parts) = group(text, from: start, open: "{", close: "}", separator: ",") else { return nil }
        if parts.count > 1 { return (end, parts) }
        let body = String(parts[0])
        let bounds = body.split(separator: ".", omittingEmptySubsequences: false)
        // `{1..3}`: `1`, ``, `3` around the two dots.
        guard bounds.count == 3, bounds[1].isEmpty, let low = Int(bounds[0]), let high = Int(bounds[2]) else { return nil }
        let step = low <= high ? 1 : -1
        guard abs(high - low) < maxAlternatives else { return nil }
        return (end, stride(from: low, through: high, by: step).map { Array(String($0)) })
    }

    /// The group opened by `open` at `start`: the index of its `close` and its parts split at
    /// top-level `separator`s; nil when it is not closed.
    private static func group(
        _ text: [Character], from start: Int, open: Character, close: Character, separator: Character
    ) -> (Int, [[Character]])? {
        var depth = 0
        var parts: [[Character]] = []
        var current: [Character] = []
        var index = start
        while index < text.count {
            let character = text[index]
            if character == "\\", index + 1 < text.count {
                current.append(contentsOf: text[index...(index + 1)])
                index += 2
                continue
            }
            if character == "[", let end = classEnd(text, from: index) {
                current.append(contentsOf: text[index...end])
                index = end + 1
                continue
            }
            if character == open {
                depth += 1
                if depth == 1 {
                    index += 1
                    continue
                }
            } else if character == close {
                depth -= 1
                if depth == 0 {
                    parts.append(current)
                    return (index, parts)
                }
            } else if character == separator, depth == 1 {
                parts.append(current)
                current = []
                index += 1
                continue
            }
            current.append(character)
            index += 1
        }
        return nil
    }

    /// One expanded alternative, split at slashes into segments.
    static func segments(of text: [Character], options: Options) throws(GlobPatternError) -> [Segment] {
        try text.split(separator: "/", omittingEmptySubsequences: false).map { slice throws(GlobPatternError) in
            let segment = Array(slice)
            if segment == ["*", "*"] { return .globstar }
            if options.contains(.captures), let capture = capture(segment) { return capture }
            return .parts(try parts(of: segment, escapes: options.contains(.relative)))
        }
    }

    /// `:name`, `:name*`, `:name+` or `:name?` as a whole segment (names are word characters,
    /// as in the path patterns Firebase's redirects take them from).
    private static func capture(_ segment: [Character]) -> Segment? {
        guard segment.first == ":", segment.count > 1 else { return nil }
        var name = segment.dropFirst()
        var repeatMark = CaptureRepeat.one
        switch name.last {
        case "*": repeatMark = .zeroOrMore
        case "+": repeatMark = .oneOrMore
        case "?": repeatMark = .zeroOrOne
        default: break
        }
        if repeatMark != .one { name = name.dropLast() }
        guard !name.isEmpty, name.allSatisfy({ $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }) else { return nil }
        return .capture(name: String(name), repeat: repeatMark)
    }

    private static func parts(of segment: [Character], escapes: Bool) throws(GlobPatternError) -> [Part] {
        var parts: [Part] = []
        var index = 0
        while index < segment.count {
            let character = segment[index]
            switch character {
            case "*":
                if parts.last != .star { parts.append(.star) }
            case "?":
                parts.append(.anyCharacter)
            case "[":
                if let end = classEnd(segment, from: index) {
                    parts.append(.characterClass(try GlobCharacterClass(segment[(index + 1)..<end])))
                    index = end
                } else {
                    parts.append(.literal("["))
                }
            case "\\" where escapes && index + 1 < segment.count:
                index += 1
                parts.append(.literal(segment[index]))
            default:
                parts.append(.literal(character))
            }
            index += 1
        }
        return parts
    }
}
