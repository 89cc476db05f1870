import Foundation
import Synchronization

/// The operator's list of words moderation masks: a text file, one word per line (`#` starts a
/// comment), made with a short default list the first time and read again whenever it changes,
/// so an edit takes effect at the next post without a restart.
///
/// Threading: ``moderation()`` may be called from any task; the lock guards the cached list.
public final class MaskedWordsFile: Sendable {
    public let url: URL
    private struct Loaded {
        var modified: Date?
        var moderation = TextModeration(maskedWords: [String]())
    }
    private let loaded = Mutex(Loaded())

    /// What a new list holds.
    public static let defaultText = """
        # Words the social app masks in posts and comments (one per line, any case; a word
        # matches whole). Edit freely: the server reads this file again when it changes.
        ass
        asshole
        bastard
        bitch
        crap
        damn
        fuck
        shit

        """

    /// Uses the list at `url`, making it (and its folder) with ``defaultText`` when missing.
    public init(url: URL) throws {
        self.url = url
        if !FileManager.default.fileExists(atPath: url.path) {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(Self.defaultText.utf8).write(to: url, options: .atomic)
        }
    }

    /// The moderation with the list as it is now (the last good one when the file cannot be read).
    public func moderation() -> TextModeration {
        let modified = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.modificationDate] as? Date
        if let current = loaded.withLock({ $0.modified == modified && modified != nil ? $0.moderation : nil }) { return current }
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return loaded.withLock { $0.moderation } }
        let moderation = TextModeration(maskedWords: Self.words(in: text))
        loaded.withLock { $0 = Loaded(modified: modified, moderation: moderation) }
        return moderation
    }

    /// The words of a list's text.
    static func words(in text: String) -> [String] {
        text.split(whereSeparator: \.isNewline).compactMap { line in
            let word = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first?
                .trimmingCharacters(in: .whitespaces) ?? ""
            return word.isEmpty ? nil : word
        }
    }
}
