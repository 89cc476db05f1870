import HearthCore

/// Paths to set in one multi-path update, kept free of overlaps: a path under one already
/// being deleted is dropped, and a deletion takes the place of whatever was queued below it.
struct SocialChanges {
    private(set) var values: [Path: Node] = [:]

    var isEmpty: Bool { values.isEmpty }
    var count: Int { values.count }

    /// Queues `path` to be deleted.
    mutating func delete(_ path: Path) {
        set(path, .null)
    }

    /// Queues `path` to be set to `value`.
    mutating func set(_ path: Path, _ value: Node) {
        var ancestor = path.parent
        while let above = ancestor {
            if values[above]?.isNull == true { return }
            ancestor = above.parent
        }
        if value.isNull {
            for queued in values.keys where queued != path && path.contains(queued) { values[queued] = nil }
        }
        values[path] = value
    }

    /// The queued paths in updates of at most `size` paths each.
    func chunks(of size: Int) -> [[Path: Node]] {
        let sorted = values.sorted { Path.compare($0.key, $1.key) < 0 }
        return stride(from: 0, to: sorted.count, by: size).map { start in
            Dictionary(uniqueKeysWithValues: sorted[start..<min(sorted.count, start + size)].map { ($0.key, $0.value) })
        }
    }
}
