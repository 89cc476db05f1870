import Foundation

/// A `regex` source: Firebase takes RE2 syntax; Hearth runs it with ICU
/// (`NSRegularExpression`) after refusing what RE2 would refuse and ICU would accept
/// (backreferences, lookaround, atomic groups, possessive quantifiers), so a pattern that works
/// here works on Firebase. RE2's `(?P<name>…)` is accepted as ICU's `(?<name>…)`.
///
/// ICU backtracks, so even RE2 syntax such as `(a+)+$` can take exponential time on a crafted
/// path. Each match therefore runs under a step budget (``stepBudget``, about a million of
/// ICU's steps, checked through its progress callback): a match that overruns it counts as no
/// match. Like superstatic, a regex is searched for anywhere in the path unless anchored
/// (`^…$`).
public struct HostingRegex: @unchecked Sendable, CustomStringConvertible {
    // `NSRegularExpression` is immutable and documented thread-safe, but not `Sendable` on Linux.
    private let expression: NSRegularExpression
    /// The pattern as written.
    public let pattern: String
    /// The names of `(?P<name>…)` groups.
    public let groupNames: [String]

    /// ICU's progress callback comes every 10,000 steps or so; this many of them end a match.
    static let stepBudget = 100

    /// Checks and compiles `pattern`.
    /// - Throws: ``GlobPatternError`` naming what RE2 would refuse, or ICU's complaint.
    public init(_ pattern: String) throws(GlobPatternError) {
        self.pattern = pattern
        let (translated, names) = try Self.translate(pattern)
        do {
            expression = try NSRegularExpression(pattern: translated)
        } catch {
            throw GlobPatternError("\(pattern) is not a valid regular expression")
        }
        groupNames = names
    }

    public var description: String { pattern }

    /// The groups of the first match in `path`: `"0"` for the whole match, `"1"`, `"2"`, … and
    /// each named group by name (a group that took no part is left out); nil when none matches,
    /// or the match ran out of its step budget.
    public func captures(in path: String) -> [String: String]? {
        let text = path as NSString
        guard let found = firstMatch(in: path).result else { return nil }
        var groups: [String: String] = [:]
        for index in 0..<found.numberOfRanges {
            let range = found.range(at: index)
            if range.location != NSNotFound { groups[String(index)] = text.substring(with: range) }
        }
        for name in groupNames {
            let range = found.range(withName: name)
            if range.location != NSNotFound { groups[name] = text.substring(with: range) }
        }
        return groups
    }

    /// The first match in `path`, and whether the search was stopped by the step budget.
    func firstMatch(in path: String) -> (result: NSTextCheckingResult?, exhausted: Bool) {
        var found: NSTextCheckingResult?
        var ticks = 0
        expression.enumerateMatches(
            in: path, options: [.reportProgress], range: NSRange(location: 0, length: (path as NSString).length)
        ) { result, flags, stop in
            if let result {
                found = result
                stop.pointee = true
            } else if flags.contains(.progress) {
                ticks += 1
                if ticks > Self.stepBudget { stop.pointee = true }
            }
        }
        return (found, ticks > Self.stepBudget)
    }

    /// Whether the expression is found in `path`.
    public func matches(_ path: String) -> Bool {
        captures(in: path) != nil
    }

    /// `pattern` in ICU's syntax, with its group names; refuses what RE2 has not.
    static func translate(_ pattern: String) throws(GlobPatternError) -> (String, [String]) {
        let text = Array(pattern)
        var out = ""
        var names: [String] = []
        var index = 0
        var inClass = false
        func refuse(_ what: String) -> GlobPatternError {
            GlobPatternError("\(pattern): \(what) are not RE2 syntax, which Firebase Hosting takes")
        }
        while index < text.count {
            let character = text[index]
            let next: Character? = index + 1 < text.count ? text[index + 1] : nil
            if character == "\\", let next {
                if !inClass, next.isNumber, next != "0" { throw refuse("backreferences (\\\(next))") }
                if !inClass, next == "k" { throw refuse("named backreferences (\\k)") }
                out.append(character)
                out.append(next)
                index += 2
                continue
            }
            if inClass {
                if character == "]" { inClass = false }
                out.append(character)
                index += 1
                continue
            }
            switch character {
            case "[":
                inClass = true
                out.append(character)
                // A `]` right after `[` or `[^` is a member, not the end.
                if next == "^" {
                    out.append("^")
                    index += 1
                }
                if index + 1 < text.count, text[index + 1] == "]" {
                    out.append("]")
                    index += 1
                }
            case "(" where next == "?":
                let rest = String(text[(index + 2)...].prefix(3))
                if rest.hasPrefix("=") || rest.hasPrefix("!") || rest.hasPrefix("<=") || rest.hasPrefix("<!") {
                    throw refuse("lookahead and lookbehind")
                }
                if rest.hasPrefix(">") { throw refuse("atomic groups") }
                if rest.hasPrefix("P<") || rest.hasPrefix("<") {
                    // (?P<name> or (?<name>: ICU spells it the second way.
                    let nameStart = index + (rest.hasPrefix("P") ? 4 : 3)
                    guard let close = text[nameStart...].firstIndex(of: ">") else { throw GlobPatternError("\(pattern): an unclosed group name") }
                    let name = String(text[nameStart..<close])
                    guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }), name.first?.isLetter == true else {
                        throw GlobPatternError("\(pattern): the group name \(name) must be letters and digits, starting with a letter")
                    }
                    names.append(name)
                    out += "(?<\(name)>"
                    index = close + 1
                    continue
                }
                out.append(character)
            case "*", "+", "?", "}":
                out.append(character)
                if next == "+" { throw refuse("possessive quantifiers (\(character)+)") }
            default:
                out.append(character)
            }
            index += 1
        }
        return (out, names)
    }
}
