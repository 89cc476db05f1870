import HearthCore

/// Firebase's rules for the events between two results of a view (free of I/O):
///
/// - every child removed, then added, then moved, then changed, then the value;
/// - within a type, children in the query's order (a removed child by its old value);
/// - a changed child whose sort value changed is also moved, even if its place did not;
/// - an added, moved or changed child comes with the key before it in the new result;
/// - the value only once the data is complete: when it first is, then on every change;
/// - for each change, every registration that wants the type, in the order they were added.
enum EventGenerator {
    private struct Change {
        let key: ChildKey
        let node: Node
        let position: IndexEntry
    }

    static func events(
        from old: ViewResult, to new: ViewResult, at path: Path, query: Query, for registrations: [Registration]
    ) -> [ViewEvent] {
        guard !registrations.isEmpty else { return [] }
        var oldValues: [ChildKey: Node] = [:]
        oldValues.reserveCapacity(old.entries.count)
        for entry in old.entries { oldValues[entry.key] = entry.value }
        var newKeys: Set<ChildKey> = []
        newKeys.reserveCapacity(new.entries.count)
        var removed: [Change] = []
        var added: [Change] = []
        var moved: [Change] = []
        var changed: [Change] = []
        var previousKeys: [ChildKey: String?] = [:]
        var previous: String?
        func position(_ key: ChildKey, _ node: Node) -> IndexEntry { IndexEntry(value: query.sortValue(of: node), key: key) }
        for entry in new.entries {
            newKeys.insert(entry.key)
            defer { previous = entry.key.string }
            guard let oldValue = oldValues[entry.key] else {
                added.append(Change(key: entry.key, node: entry.value, position: position(entry.key, entry.value)))
                previousKeys[entry.key] = previous
                continue
            }
            guard oldValue != entry.value else { continue }
            let change = Change(key: entry.key, node: entry.value, position: position(entry.key, entry.value))
            changed.append(change)
            previousKeys[entry.key] = previous
            if case .key = query.order {} else if query.sortValue(of: oldValue) != change.position.value {
                moved.append(change)
            }
        }
        for entry in old.entries where !newKeys.contains(entry.key) {
            removed.append(Change(key: entry.key, node: entry.value, position: position(entry.key, entry.value)))
        }
        let valueChanged = new.complete && (!old.complete || old.node != new.node)
        return emitAll(
            removed: removed, added: added, moved: moved, changed: changed, previousKeys: previousKeys, value: valueChanged,
            new: new, at: path, query: query, for: registrations)
    }

    /// The same events when only the children `keys` can differ between `old` and `new` (a
    /// change below the view's location): O(changed children), not O(children), so a busy
    /// listener on a long list stays fast.
    static func events(
        from old: ViewResult, to new: ViewResult, changing keys: Set<ChildKey>, at path: Path, query: Query,
        for registrations: [Registration]
    ) -> [ViewEvent] {
        guard !registrations.isEmpty else { return [] }
        var removed: [Change] = []
        var added: [Change] = []
        var moved: [Change] = []
        var changed: [Change] = []
        var previousKeys: [ChildKey: String?] = [:]
        func position(_ key: ChildKey, _ node: Node) -> IndexEntry { IndexEntry(value: query.sortValue(of: node), key: key) }
        for key in keys {
            let oldValue = old.node.child(at: Path(keys: [key])), newValue = new.node.child(at: Path(keys: [key]))
            guard oldValue != newValue else { continue }
            if newValue.isNull {
                removed.append(Change(key: key, node: oldValue, position: position(key, oldValue)))
                continue
            }
            let change = Change(key: key, node: newValue, position: position(key, newValue))
            let index = new.index(of: change.position, query: query)
            previousKeys[key] = index > 0 ? new.entries[index - 1].key.string : nil
            if oldValue.isNull {
                added.append(change)
                continue
            }
            changed.append(change)
            if case .key = query.order {} else if query.sortValue(of: oldValue) != change.position.value {
                moved.append(change)
            }
        }
        let anyChange = !removed.isEmpty || !added.isEmpty || !changed.isEmpty
        return emitAll(
            removed: removed, added: added, moved: moved, changed: changed, previousKeys: previousKeys,
            value: new.complete && (!old.complete || anyChange), new: new, at: path, query: query, for: registrations)
    }

    private static func emitAll(
        removed: [Change], added: [Change], moved: [Change], changed: [Change], previousKeys: [ChildKey: String?], value: Bool,
        new: ViewResult, at path: Path, query: Query, for registrations: [Registration]
    ) -> [ViewEvent] {
        var events: [ViewEvent] = []
        func emit(_ type: DataEventType, _ changes: [Change]) {
            guard registrations.contains(where: { $0.types.contains(type) }) else { return }
            let sorted = changes.sorted { IndexEntry.compare($0.position, $1.position) < 0 }
            for change in sorted {
                let previousKey = type == .childRemoved ? nil : previousKeys[change.key] ?? nil
                for registration in registrations where registration.types.contains(type) {
                    events.append(ViewEvent(
                        registration: registration.id, type: type, path: path.child(change.key), node: change.node,
                        previousKey: previousKey, order: query))
                }
            }
        }
        emit(.childRemoved, removed)
        emit(.childAdded, added)
        emit(.childMoved, moved)
        emit(.childChanged, changed)
        if value {
            for registration in registrations where registration.types.contains(.value) {
                events.append(ViewEvent(
                    registration: registration.id, type: .value, path: path, node: new.node, previousKey: nil, order: query))
            }
        }
        return events
    }
}
