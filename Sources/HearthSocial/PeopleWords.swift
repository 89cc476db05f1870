/// How people read in a sentence ("Carol, Bob and 3 others") and who liked a post, newest
/// first: the same words as the web app's `app/people-words.js`, so both apps say the same.
/// Pure: no database.
public enum PeopleWords {
    /// Names spelled out before the rest are counted.
    static let named = 2

    /// `names` (the first ones, newest first) of `total` people as a sentence says them:
    /// "Carol", "Carol and Bob", "Carol, Bob and Dan", "Carol, Bob and 2 others". Three are
    /// named rather than "and 1 other", which says less in as many words. An empty name reads
    /// "Someone".
    public static func phrase(_ names: [String], total: Int? = nil) -> String {
        let total = total ?? names.count
        let shown = names.prefix(total <= named + 1 ? total : named).map { $0.isEmpty ? "Someone" : $0 }
        let rest = total - shown.count
        if rest > 0 { return "\(shown.joined(separator: ", ")) and \(rest) \(rest == 1 ? "other" : "others")" }
        guard shown.count > 1, let last = shown.last else { return shown.first ?? "" }
        return "\(shown.dropLast().joined(separator: ", ")) and \(last)"
    }

    /// The likers in a post's likes, newest like first (the same time: by uid, so the order
    /// is stable).
    public static func likers(_ likes: [Like]) -> [String] {
        likes.sorted { ($1.timestamp, $0.uid) < ($0.timestamp, $1.uid) }.map(\.uid)
    }

    /// The line under a post's like button: "Liked by Carol, Bob and 3 others"; empty when
    /// nobody likes it. The reader's own like reads "you" and comes first, as they know of it.
    public static func likedBy(_ uids: [String], nameOf: (String) -> String, reader: String? = nil) -> String {
        guard !uids.isEmpty else { return "" }
        let ordered = reader.map { me in uids.contains(me) ? [me] + uids.filter { $0 != me } : uids } ?? uids
        let names = ordered.prefix(named + 1).map { $0 == reader ? "you" : nameOf($0) }
        return "Liked by \(phrase(Array(names), total: ordered.count))"
    }
}
