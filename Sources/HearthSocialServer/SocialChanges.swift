import HearthCore

/// Paths to set in one multi-path update, kept free of overlaps: a path under one being deleted
/// is dropped, whichever was queued first. Queuing costs the path's depth; the overlaps are
/// settled once, in path order, when the changes are read (a clean-up queues thousands).
struct SocialChanges {
    private var queued: [Path: Node] = [:]

    var isEmpty: Bool { queued.isEmpty }
    var count: Int { normalized.count }
    /// The changes, without paths under a deleted one.
    var values: [Path: Node] { Dictionary(uniqueKeysWithValues: normalized) }

    /// Queues `path` to be deleted.
    mutating func delete(_ path: Path) {
        set(path, .null)
    }

    /// Queues `path` to be set to `value`.
    mutating func set(_ path: Path, _ value: Node) {
        var ancestor = path.parent
        while let above = ancestor {
            if queued[above]?.isNull == true { return }
            ancestor = above.parent
        }
        queued[path] = value
    }

    /// The queued paths in updates of at most `size` paths each.
    func chunks(of size: Int) -> [[Path: Node]] {
        let sorted = normalized
        return stride(from: 0, to: sorted.count, by: size).map { start in
            Dictionary(uniqueKeysWithValues: sorted[start..<min(sorted.count, start + size)].map { ($0.path, $0.value) })
        }
    }

    /// In path order (an ancestor before what is below it), each path under a deleted one left out.
    private var normalized: [(path: Path, value: Node)] {
        var kept: [(path: Path, value: Node)] = []
        var deleted: [Path] = []
        for (path, value) in queued.sorted(by: { Path.compare($0.key, $1.key) < 0 }) {
            // The deleted paths that are still ancestors of this one stay on the stack.
            while let last = deleted.last, !last.contains(path) { deleted.removeLast() }
            if !deleted.isEmpty { continue }
            kept.append((path, value))
            if value.isNull { deleted.append(path) }
        }
        return kept
    }
}
