import HearthCore

/// A write made on this device that the server has not acknowledged yet: shown locally at once
/// (over the server's data) and sent in order, again after every reconnection, until answered.
struct PendingWrite: Sendable {
    /// A whole value, or several children of a location.
    enum Change: Sendable {
        case set(Node)
        case merge([(path: Path, value: Node)])
    }

    /// Increasing in the order writes were made; kept across restarts.
    let id: Int64
    let path: Path
    /// As sent: server values (`{".sv": …}`) still unresolved.
    let change: Change
    /// As shown here: server values resolved against what this device saw when writing.
    var local: Change
    /// False for a transaction that runs without showing its value until the server agrees.
    var visible: Bool = true
    /// The hash the server's current value must have (a transaction's condition).
    var hash: String?

    /// The absolute locations this write sets, with their local values.
    var entries: [(path: Path, value: Node)] {
        switch local {
        case .set(let node): return [(path, node)]
        case .merge(let children): return children.map { (path.appending($0.path), $0.value) }
        }
    }

    /// True when this write changes something at, above or below `location`.
    func touches(_ location: Path) -> Bool {
        entries.contains { $0.path.contains(location) || location.contains($0.path) }
    }
}

extension [PendingWrite] {
    /// `known`, the server's data at `location`, with every visible write laid over it in order.
    func overlay(_ known: KnownNode, at location: Path) -> KnownNode {
        var result = known
        for write in self where write.visible {
            for entry in write.entries {
                result.apply(entry.value, writtenAt: entry.path, to: location)
            }
        }
        return result
    }
}
