import Foundation

/// How metadata stores keep an object's maps and lists as text, the same in every store.
extension StoredObject {
    /// Custom metadata as stored: JSON with sorted keys.
    public static func customMetadataText(_ metadata: [String: String]) throws -> String {
        String(decoding: try JSONEncoder.sorted.encode(metadata), as: UTF8.self)
    }

    /// Custom metadata from its stored text (none when it cannot be read).
    public static func customMetadata(text: String) -> [String: String] {
        (try? JSONDecoder().decode([String: String].self, from: Data(text.utf8))) ?? [:]
    }

    /// Download tokens as stored: comma-separated.
    public static func downloadTokensText(_ tokens: [String]) -> String {
        tokens.joined(separator: ",")
    }

    /// Download tokens from their stored text.
    public static func downloadTokens(text: String) -> [String] {
        text.split(separator: ",").map(String.init)
    }
}
