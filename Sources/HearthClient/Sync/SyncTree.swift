import HearthCore

/// The local state of one database, free of I/O: the server's data this device holds, the
/// writes it has not had acknowledged, and the views listeners watch. Every change returns the
/// events it causes, for every view it touches (deeper views first, then their ancestors, as
/// Firebase's SDKs raise them); the ``SyncCore`` around it talks to the server.
///
/// Server data comes two ways, as the realtime protocol sends it: untagged, for plain listens
/// (it is the server's whole value at the path it names, so that path becomes complete), and
/// tagged, for a filtered query's own listen (it goes to that query's window only).
struct SyncTree: Sendable {
    /// The server's data under plain listens (and `.info`).
    private(set) var server: Node = .null
    /// Locations whose server data is known in full (none below another).
    private(set) var completePaths: Set<Path> = []
    /// Writes not yet acknowledged, oldest first.
    private(set) var writes: [PendingWrite] = []
    private(set) var views: [ViewKey: SyncView] = [:]
    private var registrations: [Int: ViewKey] = [:]
    private var nextViewSequence = 0
    /// Cached selections of filtered views about to be made.
    private var cachedWindows: [ViewKey: Node] = [:]

    static let infoPath = Path(keys: [ChildKey(".info")])

    init() {
        completePaths.insert(Self.infoPath)
    }

    // MARK: - Listeners

    /// Adds a registration to the view of `query` at `path` (made if new) and returns the
    /// events it gets at once: the children known, then the value if complete.
    mutating func addRegistration(_ registration: Registration, path: Path, query: Query?) -> [ViewEvent] {
        let key = ViewKey(path: path, query: query)
        if views[key] == nil {
            var view = SyncView(key: key, query: query, sequence: nextViewSequence)
            nextViewSequence += 1
            if view.isFiltered, isCovered(path) {
                view.window = .complete(view.clipped(server.child(at: path)))
            } else if let cached = cachedWindows.removeValue(forKey: key) {
                view.window = .complete(cached)
            }
            view.result = view.result(for: visible(at: path, for: view))
            views[key] = view
        }
        views[key]!.registrations.append(registration)
        registrations[registration.id] = key
        return views[key]!.initialEvents(for: registration)
    }

    /// Removes a registration; its view goes when it has none left. Returns the view's key
    /// when the view went.
    @discardableResult
    mutating func removeRegistration(_ id: Int) -> ViewKey? {
        guard let key = registrations.removeValue(forKey: id), var view = views[key] else { return nil }
        view.registrations.removeAll { $0.id == id }
        guard view.registrations.isEmpty else {
            views[key] = view
            return nil
        }
        removeView(key)
        return key
    }

    /// Removes a view and everything only it kept (a cancelled listen ends all its views).
    /// Returns the registrations it had.
    @discardableResult
    mutating func removeView(_ key: ViewKey) -> [Registration] {
        guard let view = views.removeValue(forKey: key) else { return [] }
        for registration in view.registrations { registrations[registration.id] = nil }
        if !view.isFiltered { forgetUnlistened() }
        return view.registrations
    }

    /// The view a registration belongs to.
    func viewKey(of registration: Int) -> ViewKey? { registrations[registration] }

    /// The listens the server should have for these views: a plain listen for every location
    /// viewed whole (unless a plain listen above covers it), a query listen for every filtered
    /// query no plain listen at or above covers. `.info` is local.
    var neededListens: [ViewKey: Query?] {
        let plainPaths = Set(views.values.filter { !$0.isFiltered }.map(\.key.path))
        func coveredByPlain(_ path: Path, strictly: Bool) -> Bool {
            var current: Path? = strictly ? path.parent : path
            while let candidate = current {
                if plainPaths.contains(candidate) { return true }
                current = candidate.parent
            }
            return false
        }
        var listens: [ViewKey: Query?] = [:]
        for view in views.values where !Self.infoPath.contains(view.key.path) {
            if view.isFiltered {
                if !coveredByPlain(view.key.path, strictly: false) { listens[view.key] = view.query }
            } else if !coveredByPlain(view.key.path, strictly: true) {
                listens[ViewKey(path: view.key.path, identifier: ViewKey.defaultIdentifier)] = .some(nil)
            }
        }
        return listens
    }

    // MARK: - Server data

    /// The server's whole value at `path`: for a plain listen (`tag` nil) or a filtered query's own.
    mutating func applyServerOverwrite(_ node: Node, at path: Path, tag: ViewKey? = nil) -> [ViewEvent] {
        applyServer([(path, node)], tag: tag)
    }

    /// New values for several children of `path` (each whole).
    mutating func applyServerMerge(_ children: [(path: Path, value: Node)], at path: Path, tag: ViewKey? = nil) -> [ViewEvent] {
        applyServer(children.map { (path.appending($0.path), $0.value) }, tag: tag)
    }

    /// The server finished answering a listen: its data is complete even if it sent none.
    mutating func completeListen(_ key: ViewKey) -> [ViewEvent] {
        if key.isDefault {
            markComplete(key.path)
        } else if var view = views[key] {
            view.window.complete = true
            view.window.completeChildren = []
            views[key] = view
        }
        return refresh(changed: [key.path])
    }

    /// Data from the device's cache, shown as the server's until the server answers.
    mutating func applyCached(_ node: Node, at path: Path, complete: Bool) -> [ViewEvent] {
        server = server.setting(node, at: path)
        if complete { markComplete(path) }
        return refresh(changed: [path])
    }

    /// A filtered view's selection from the device's cache, for the view about to be made.
    mutating func applyCached(window node: Node, for key: ViewKey) -> [ViewEvent] {
        cachedWindows[key] = node
        return []
    }

    /// Sets a local-only `.info` value (`connected`, `serverTimeOffset`).
    mutating func setInfo(_ key: String, _ value: Node) -> [ViewEvent] {
        applyServer([(Self.infoPath.child(ChildKey(key)), value)], tag: nil)
    }

    private mutating func applyServer(_ entries: [(path: Path, value: Node)], tag: ViewKey?) -> [ViewEvent] {
        if let tag {
            guard var view = views[tag] else { return [] }
            for entry in entries {
                let location = view.key.path
                view.window.apply(entry.value, writtenAt: entry.path, to: location)
            }
            view.window.node = view.clipped(view.window.node)
            views[tag] = view
        } else {
            for entry in entries {
                server = server.setting(entry.value, at: entry.path)
                markComplete(entry.path)
            }
            // Filtered queries with listens of their own see the data too, within their selection.
            for (key, var view) in views where view.isFiltered && !isCovered(key.path) {
                var touched = false
                for entry in entries where entry.path.contains(key.path) || key.path.contains(entry.path) {
                    view.window.apply(entry.value, writtenAt: entry.path, to: key.path)
                    touched = true
                }
                guard touched else { continue }
                view.window.node = view.clipped(view.window.node)
                views[key] = view
            }
        }
        return refresh(changed: entries.map(\.path))
    }

    // MARK: - Local writes

    /// Shows a new write at once.
    mutating func addWrite(_ write: PendingWrite) -> [ViewEvent] {
        writes.append(write)
        return write.visible ? refresh(changed: write.entries.map(\.path)) : []
    }

    /// The server answered a write (either way): it no longer lies over the server's data. A
    /// refused write's value goes; an accepted one's is already in the server's data.
    mutating func removeWrite(_ id: Int64) -> [ViewEvent] {
        guard let index = writes.firstIndex(where: { $0.id == id }) else { return [] }
        let write = writes.remove(at: index)
        return write.visible ? refresh(changed: write.entries.map(\.path)) : []
    }

    /// Replaces a pending write (a transaction run again on newer data).
    mutating func replaceWrite(_ write: PendingWrite) -> [ViewEvent] {
        guard let index = writes.firstIndex(where: { $0.id == write.id }) else { return addWrite(write) }
        let old = writes[index]
        writes[index] = write
        return refresh(changed: old.entries.map(\.path) + write.entries.map(\.path))
    }

    // MARK: - Reading

    /// What the server's data says at `path`.
    func serverKnown(at path: Path) -> KnownNode {
        if isCovered(path) { return .complete(server.child(at: path)) }
        // A complete filtered view above may hold this location in its selection.
        for view in views.values where view.isFiltered && view.window.complete && view.key.path.count < path.count
            && view.key.path.contains(path)
        {
            let relative = path.dropFirst(view.key.path.count)
            if let first = relative.first, !view.window.node.child(first).isNull {
                return .complete(view.window.node.child(at: relative))
            }
        }
        var known = KnownNode.unknown
        for complete in completePaths where complete.count == path.count + 1 && path.contains(complete) {
            known.set(server.child(at: complete), at: Path(keys: [complete.last!]))
        }
        return known
    }

    /// What this device shows at `path`: the server's data with pending writes laid over.
    func visible(at path: Path) -> KnownNode {
        writes.overlay(serverKnown(at: path), at: path)
    }

    /// True when the server's data at `path` is known in full.
    func isCovered(_ path: Path) -> Bool {
        var current: Path? = path
        while let candidate = current {
            if completePaths.contains(candidate) { return true }
            current = candidate.parent
        }
        return false
    }

    // MARK: - Internals

    private func visible(at path: Path, for view: SyncView) -> KnownNode {
        guard view.isFiltered, !isCovered(path) else { return writes.overlay(serverKnown(at: path), at: path) }
        // A filtered view knows only the children in its window: a write inside another child
        // waits for the server to say what that child now is (as Firebase's SDKs).
        var result = view.window
        for write in writes where write.visible {
            for entry in write.entries {
                if entry.path.count > path.count + 1, path.contains(entry.path),
                    result.node.child(at: Path(keys: [entry.path.keys[path.count]])).isNull
                {
                    continue
                }
                result.apply(entry.value, writtenAt: entry.path, to: path)
            }
        }
        return result
    }

    private mutating func markComplete(_ path: Path) {
        guard !isCovered(path) else { return }
        completePaths = completePaths.filter { !path.contains($0) }
        completePaths.insert(path)
    }

    /// Recomputes every view at, above or below a changed location and returns their events:
    /// deeper views first, siblings in key order, then ancestors (Firebase's order).
    private mutating func refresh(changed paths: [Path]) -> [ViewEvent] {
        var touched: [SyncView] = []
        for view in views.values
        where paths.contains(where: { $0.contains(view.key.path) || view.key.path.contains($0) }) {
            touched.append(view)
        }
        touched.sort(by: Self.raisesFirst)
        var events: [ViewEvent] = []
        for var view in touched {
            let known = visible(at: view.key.path, for: view)
            if let keys = Self.changedChildren(of: view.key.path, paths) {
                events += view.update(to: known, changing: keys)
            } else {
                events += view.update(to: view.result(for: known))
            }
            views[view.key] = view
        }
        return events
    }

    /// The children of `location` that changes at `paths` can touch, or nil when one of them
    /// is at or above `location` (the whole view must be recomputed).
    static func changedChildren(of location: Path, _ paths: [Path]) -> Set<ChildKey>? {
        var keys: Set<ChildKey> = []
        for path in paths where path.contains(location) || location.contains(path) {
            guard path.count > location.count else { return nil }
            keys.insert(path.keys[location.count])
        }
        return keys
    }

    /// Post-order over the tree of views: a descendant before its ancestor, siblings by key
    /// (compared as strings), views at one location in the order they were made.
    static func raisesFirst(_ lhs: SyncView, _ rhs: SyncView) -> Bool {
        let left = lhs.key.path.keys, right = rhs.key.path.keys
        for (a, b) in zip(left, right) where a != b {
            return a.string < b.string
        }
        if left.count != right.count { return left.count > right.count }
        return lhs.sequence < rhs.sequence
    }

    /// Drops server data and completeness that no plain listen keeps up to date any more,
    /// first handing filtered views that lose their cover a window of their own.
    private mutating func forgetUnlistened() {
        let plainRoots = Set(views.values.filter { !$0.isFiltered }.map(\.key.path)).filter { path in
            var current = path.parent
            while let ancestor = current {
                if views.values.contains(where: { !$0.isFiltered && $0.key.path == ancestor }) { return false }
                current = ancestor.parent
            }
            return true
        }
        func kept(_ path: Path) -> Bool {
            Self.infoPath.contains(path) || plainRoots.contains { $0.contains(path) }
        }
        for (key, var view) in views where view.isFiltered && isCovered(key.path) && !kept(key.path) {
            view.window = .complete(view.clipped(server.child(at: key.path)))
            views[key] = view
        }
        // A listen that was covered keeps its data complete: the server answers its own
        // listen with the changes since (Firebase's SDKs do the same).
        let stillComplete = plainRoots.filter { isCovered($0) }
        let keptComplete = completePaths.filter(kept)
        completePaths = keptComplete.union(stillComplete.filter { root in !keptComplete.contains { $0.contains(root) } })
        var pruned = Node.null
        for root in plainRoots.union([Self.infoPath]) {
            pruned = pruned.setting(server.child(at: root), at: root)
        }
        server = pruned
    }
}
