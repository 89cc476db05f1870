import HearthCore

extension AccountCleanup {
    /// Where `uid` still appears: database paths whose key or string value holds it, and
    /// stored files named under its folder. Empty after a finished ``run(uid:)`` (unless the
    /// person's own devices wrote again since; a later run takes that away too).
    ///
    /// Reads the whole database: for checks and for an operator's question, not for requests.
    public func traces(of uid: String) async throws -> [String] {
        var found: [String] = []
        func walk(_ node: Node, at path: Path) {
            if let text = node.string, text.contains(uid) {
                found.append("\(path) = \(text)")
                return
            }
            for (key, child) in node.entries {
                let below = path.with(key)
                if key.contains(uid) {
                    found.append(below.description)
                } else {
                    walk(child, at: below)
                }
            }
        }
        walk(try await data.value(at: .root), at: .root)
        return found + (try await files.names(under: "\(uid)/")).map { "file \($0)" }
    }
}
