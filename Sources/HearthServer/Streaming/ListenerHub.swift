import Dispatch
import HearthCore
import HearthStore
import NIOCore
import Synchronization

/// Every open stream, by database and path, and the fan-out of committed writes to them.
///
/// Each database's commits are fanned out in commit order on one serial queue, off the commit
/// path. Listeners at the same path share each encoded event. A new listener's initial value
/// and the events it receives line up by sequence number, so nothing is missed or repeated.
final class ListenerHub: Sendable {
    /// The listeners at one path.
    final class Group: Sendable {
        let listeners = Mutex<[ObjectIdentifier: Listener]>([:])
    }

    private struct Registry {
        var groups: [String: SortedTree<Path, Group>] = [:]
        var observed: Set<String> = []
        var count = 0
    }

    private let registry = Mutex(Registry())
    private let fanOutQueue = DispatchQueue(label: "hearth.fanout")
    /// The largest event sent; a bigger one cancels the stream instead.
    let maxEventBytes: Int

    init(maxEventBytes: Int = SSEEncoding.maxEventBytes) {
        self.maxEventBytes = maxEventBytes
    }

    /// The number of open streams.
    var count: Int { registry.withLock { $0.count } }

    /// Registers a listener and returns it with its initial value, consistent with the events
    /// that will follow.
    func subscribe(to database: Database, at path: Path, query: Query?, expires: Int64? = nil) -> (Listener, Node) {
        let observe = registry.withLock { registry -> Bool in
            registry.observed.insert(database.name).inserted
        }
        if observe {
            let name = database.name
            database.addCommitObserver { [weak self] committed, version in
                guard let hub = self else { return }
                hub.fanOutQueue.async { hub.fanOut(committed, version: version, database: name) }
            }
        }
        return registry.withLock { registry in
            let version = database.current
            let initial = Self.value(at: path, query: query, in: version.state)
            let listener = Listener(
                database: database.name, path: path, query: query, startSequence: version.sequence, initial: initial,
                expires: expires
            )
            var groups = registry.groups[database.name] ?? SortedTree()
            let group = groups[path] ?? Group()
            group.listeners.withLock { $0[ObjectIdentifier(listener)] = listener }
            groups.insert(path, group)
            registry.groups[database.name] = groups
            registry.count += 1
            return (listener, initial)
        }
    }

    /// Removes a listener (its stream ended).
    func unsubscribe(_ listener: Listener) {
        registry.withLock { registry in
            guard var groups = registry.groups[listener.database], let group = groups[listener.path] else { return }
            let empty = group.listeners.withLock { listeners -> Bool in
                listeners[ObjectIdentifier(listener)] = nil
                return listeners.isEmpty
            }
            if empty { groups.remove(listener.path) }
            registry.groups[listener.database] = groups
            registry.count -= 1
        }
    }

    /// Every listener (for keep-alives and shutdown).
    func allListeners() -> [Listener] {
        registry.withLock { registry in
            registry.groups.values.flatMap { groups in
                groups.flatMap { $0.value.listeners.withLock { Array($0.values) } }
            }
        }
    }

    /// The value a listener sees: the value at `path`, or the query's result there.
    static func value(at path: Path, query: Query?, in state: DatabaseState) -> Node {
        guard let query else { return state.value(at: path) }
        return state.queryValue(query, at: path)
    }

    // MARK: - Fan-out

    private func fanOut(_ committed: [Database.Committed], version: Database.Published, database: String) {
        registry.withLock { registry in
            guard let groups = registry.groups[database], !groups.isEmpty else { return }
            var dirtyQueries: [ObjectIdentifier: Listener] = [:]
            for write in committed {
                for (path, group) in Self.groups(touchedBy: write.write, in: groups) {
                    let listeners = group.listeners.withLock { Array($0.values) }
                    var encoded: ByteBuffer?
                    for listener in listeners where write.sequence > listener.startSequence {
                        if listener.query != nil {
                            dirtyQueries[ObjectIdentifier(listener)] = listener
                            continue
                        }
                        if encoded == nil {
                            guard let event = write.write.event(forListenerAt: path) else { break }
                            if SSEEncoding.isTooLarge(event, limit: maxEventBytes) {
                                for listener in listeners where listener.query == nil {
                                    listener.buffer.close(with: [SSEEncoding.payloadTooLarge])
                                }
                                break
                            }
                            encoded = SSEEncoding.encode(event)
                        }
                        listener.buffer.push(encoded!, sequence: write.sequence)
                    }
                }
            }
            // A query's result is recomputed once per batch and sent only when it changed.
            for listener in dirtyQueries.values {
                let result = Self.value(at: listener.path, query: listener.query, in: version.state)
                let changed = listener.lastResult.withLock { last -> Bool in
                    guard last != result else { return false }
                    last = result
                    return true
                }
                guard changed else { continue }
                if result.estimatedSize > maxEventBytes {
                    listener.buffer.close(with: [SSEEncoding.payloadTooLarge])
                } else {
                    listener.buffer.push(SSEEncoding.encode(.put(path: .root, data: result)), sequence: version.sequence)
                }
            }
        }
    }

    /// The groups at, above and below the paths a write changed.
    private static func groups(touchedBy write: ResolvedWrite, in groups: SortedTree<Path, Group>) -> [(Path, Group)] {
        var found: [Path: Group] = [:]
        for changed in write.changedPaths {
            var prefix = Path.root
            if let group = groups[prefix] { found[prefix] = group }
            for key in changed.keys {
                prefix = prefix.child(key)
                if let group = groups[prefix] { found[prefix] = group }
            }
            for (path, group) in groups.entries(from: { Path.compare($0, changed) < 0 }) {
                guard changed.contains(path) else { break }
                found[path] = group
            }
        }
        return Array(found)
    }
}
