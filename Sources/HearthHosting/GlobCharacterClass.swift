/// A glob's `[…]`: characters, ranges (`a-z`) and POSIX classes (`[:alpha:]`), negated by a
/// leading `!` or `^`. It never matches `/` (segments hold none).
struct GlobCharacterClass: Sendable, Hashable {
    enum Item: Sendable, Hashable {
        case character(Character)
        case range(Character, Character)
        case named(String)
    }

    static let posixClasses: Set<String> = [
        "alpha", "digit", "alnum", "upper", "lower", "space", "blank", "xdigit", "punct", "word", "cntrl", "print", "graph",
    ]

    let negated: Bool
    let items: [Item]

    /// Reads the inside of `[…]`, without the brackets.
    init(_ body: ArraySlice<Character>) throws(GlobPatternError) {
        var rest = Array(body)
        negated = rest.first == "!" || rest.first == "^"
        if negated { rest.removeFirst() }
        var items: [Item] = []
        var index = 0
        func member(_ at: inout Int) -> Character {
            if rest[at] == "\\", at + 1 < rest.count { at += 1 }
            defer { at += 1 }
            return rest[at]
        }
        while index < rest.count {
            if rest[index] == "[", index + 1 < rest.count, rest[index + 1] == ":" {
                var end = index + 2
                while end + 1 < rest.count, !(rest[end] == ":" && rest[end + 1] == "]") { end += 1 }
                let name = String(rest[(index + 2)..<min(end, rest.count)])
                guard Self.posixClasses.contains(name) else {
                    throw GlobPatternError("[:\(name):] is not a character class (alpha, digit, alnum, upper, lower, space, …)")
                }
                items.append(.named(name))
                index = end + 2
                continue
            }
            let low = member(&index)
            if index + 1 < rest.count, rest[index] == "-" {
                index += 1
                let high = member(&index)
                guard low <= high else { throw GlobPatternError("the range \(low)-\(high) in [\(String(body))] is reversed") }
                items.append(.range(low, high))
            } else {
                items.append(.character(low))
            }
        }
        self.items = items
    }

    func matches(_ character: Character) -> Bool {
        guard character != "/" else { return false }
        let found = items.contains { item in
            switch item {
            case .character(let member): return member == character
            case .range(let low, let high): return low <= character && character <= high
            case .named(let name): return Self.isMember(character, of: name)
            }
        }
        return found != negated
    }

    private static func isMember(_ character: Character, of name: String) -> Bool {
        switch name {
        case "alpha": return character.isLetter
        case "digit": return character.isASCII && character.isNumber
        case "alnum": return character.isLetter || character.isNumber
        case "upper": return character.isUppercase
        case "lower": return character.isLowercase
        case "space": return character.isWhitespace
        case "blank": return character == " " || character == "\t"
        case "xdigit": return character.isHexDigit
        case "punct": return character.isPunctuation || character.isSymbol
        case "word": return character.isLetter || character.isNumber || character == "_"
        case "cntrl": return character.asciiValue.map { $0 < 32 || $0 == 127 } ?? false
        case "print": return !(character.asciiValue.map { $0 < 32 || $0 == 127 } ?? false)
        case "graph": return !character.isWhitespace && !(character.asciiValue.map { $0 < 32 || $0 == 127 } ?? false)
        default: return false
        }
    }
}
