/// What a listener at some location is told about one write, in the terms of Firebase's
/// streaming API: replace the value at a relative path (`put`), or set several relative paths
/// below one (`patch`).
public enum ListenerEvent: Sendable, Equatable {
    case put(path: Path, data: Node)
    case patch(path: Path, entries: [ResolvedWrite.UpdateEntry])
}

extension ResolvedWrite {
    /// True when the write can change the value at `location` (at, above or below it).
    public func touches(_ location: Path) -> Bool {
        changedPaths.contains { $0.contains(location) || location.contains($0) }
    }

    /// The event a listener at `location` receives for this write, or nil when the write does
    /// not touch it. Paths in the event are relative to `location`.
    public func event(forListenerAt location: Path) -> ListenerEvent? {
        switch self {
        case .set(let path, let value):
            if location.contains(path) {
                return .put(path: path.dropFirst(location.count), data: value)
            }
            if path.contains(location) {
                // Written above the listener: its whole value may have changed. A priority
                // write above it leaves its value alone.
                if path.isPriorityPath { return nil }
                return .put(path: .root, data: value.child(at: location.dropFirst(path.count)))
            }
            return nil
        case .update(let base, let entries):
            if location.contains(base) {
                return .patch(path: base.dropFirst(location.count), entries: entries)
            }
            guard base.contains(location) else { return nil }
            var inside: [UpdateEntry] = []
            for entry in entries {
                let absolute = base.appending(entry.path)
                if absolute == location {
                    // Replaced whole: a put, never a patch with an empty key.
                    return .put(path: .root, data: entry.value)
                } else if location.contains(absolute) {
                    inside.append(UpdateEntry(path: absolute.dropFirst(location.count), value: entry.value))
                } else if absolute.contains(location), !absolute.isPriorityPath {
                    // Paths in one update never overlap, so this is the only entry that matters.
                    return .put(path: .root, data: entry.value.child(at: location.dropFirst(absolute.count)))
                }
            }
            return inside.isEmpty ? nil : .patch(path: .root, entries: inside)
        }
    }
}

extension JSONWriter {
    /// Renders update entries as the object a client sends: keys are relative paths.
    public static func updateObject(_ entries: [ResolvedWrite.UpdateEntry], format: Format = .compact) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        for (offset, entry) in entries.enumerated() {
            if offset > 0 { bytes.append(UInt8(ascii: ",")) }
            if format.pretty { bytes += Array("\n  ".utf8) }
            bytes += JSONWriter.bytes(.string(entry.path.keys.map(\.string).joined(separator: "/")))
            bytes += format.pretty ? Array(" : ".utf8) : [UInt8(ascii: ":")]
            var value = JSONWriter.bytes(entry.value, format: format)
            if format.pretty {
                // Nested lines sit one level in; JSON text never holds a raw newline in a string.
                value = value.flatMap { $0 == 0x0A ? [0x0A, 0x20, 0x20] : [$0] }
            }
            bytes += value
        }
        if format.pretty && !entries.isEmpty { bytes.append(0x0A) }
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }
}
