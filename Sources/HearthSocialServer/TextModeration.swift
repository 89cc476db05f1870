/// The moderation FriendlyPix's functions apply to posts and comments on the server, as pure
/// logic: "shouting" (more than half the letters upper case, or three or more `!`) is turned
/// into sentence case with each run of `!` made a `.`, and each word on the operator's list is
/// masked with as many `*` as it has characters.
///
/// FriendlyPix counts upper-case letters against the whole text's length; here they are
/// counted against its letters, so a short shout with spaces and digits ("OK 2 GO") is caught
/// and a long text with one capitalized word is not.
public struct TextModeration: Sendable {
    /// The words masked, lower case. A word matches whole, ignoring case: "class" does not
    /// match a listed "ass".
    public let maskedWords: Set<String>

    public init(maskedWords: some Sequence<String>) {
        self.maskedWords = Set(maskedWords.map { $0.lowercased() }.filter { !$0.isEmpty })
    }

    /// What moderation made of a text.
    public struct Outcome: Equatable, Sendable {
        /// The text to show.
        public var text: String
        /// True when moderation changed it.
        public var moderated: Bool

        public init(text: String, moderated: Bool) {
            self.text = text
            self.moderated = moderated
        }
    }

    /// `text` moderated.
    public func moderate(_ text: String) -> Outcome {
        var result = Self.isShouting(text) ? Self.stopShouting(text) : text
        result = mask(result)
        return Outcome(text: result, moderated: result != text)
    }

    /// More than half of the letters upper case, or three or more `!`.
    public static func isShouting(_ text: String) -> Bool {
        var letters = 0
        var upper = 0
        var exclamations = 0
        for character in text {
            if character == "!" { exclamations += 1 }
            guard character.isLetter else { continue }
            letters += 1
            if character.isUppercase { upper += 1 }
        }
        return exclamations >= 3 || (letters > 0 && upper * 2 > letters)
    }

    /// Lower case, each run of `!` a `.`, and the first letter of each sentence (the text's
    /// first, and the first after a `.`, `?` or a line break) upper case.
    public static func stopShouting(_ text: String) -> String {
        var result = ""
        var startsSentence = true
        var previous: Character?
        for character in text.lowercased() {
            if character == "!" {
                if previous != "!" { result.append(".") }
                previous = character
                startsSentence = true
                continue
            }
            if startsSentence, character.isLetter {
                result += character.uppercased()
                startsSentence = false
            } else {
                result.append(character)
                if character == "." || character == "?" || character.isNewline { startsSentence = true }
                else if character.isLetter || character.isNumber { startsSentence = false }
            }
            previous = character
        }
        return result
    }

    /// Each listed word of `text` as `*`s.
    func mask(_ text: String) -> String {
        guard !maskedWords.isEmpty else { return text }
        var result = ""
        var word = ""
        func flush() {
            result += maskedWords.contains(word.lowercased()) ? String(repeating: "*", count: word.count) : word
            word = ""
        }
        for character in text {
            if character.isLetter || character.isNumber || character == "'" {
                word.append(character)
            } else {
                flush()
                result.append(character)
            }
        }
        flush()
        return result
    }
}
