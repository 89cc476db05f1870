import HearthCore

/// How a ``ResolvedWrite`` is stored in a log row: its kind, its path, and its value as JSON in
/// export form (priorities kept). An update's value is an object keyed by relative paths.
public struct LogRecord: Sendable, Equatable {
    static let setKind = "set"
    static let updateKind = "update"
    /// A change of a setting (in a shared log): `path` is its name, `data` its UTF-8 value.
    static let settingKind = "setting"

    /// Its position in the log.
    public var sequence: Int64
    /// `set`, `update` or, in a shared log, `setting`.
    public var kind: String
    /// Where it writes (or the setting's name).
    public var path: String
    /// The value as export JSON, the update object, or the setting's UTF-8 value.
    public var data: [UInt8]

    /// The row that stores `write` at `sequence`.
    public init(sequence: Int64, write: ResolvedWrite) {
        self.sequence = sequence
        var writer = JSONWriter(format: .init(export: true))
        switch write {
        case .set(let path, let value):
            kind = Self.setKind
            self.path = path.description
            writer.write(value)
            data = writer.output
        case .update(let path, let entries):
            kind = Self.updateKind
            self.path = path.description
            data = JSONWriter.updateObject(entries, format: .init(export: true))
        }
    }

    /// A row as stored (read back from a log).
    public init(sequence: Int64, kind: String, path: String, data: [UInt8]) {
        self.sequence = sequence
        self.kind = kind
        self.path = path
        self.data = data
    }

    /// Decodes the stored write.
    func write() throws -> ResolvedWrite {
        // A set of a priority (`/a/.priority`) is logged at its `.priority` path.
        let path = try Path(parsing: self.path, allowPriority: true)
        switch kind {
        case Self.setKind:
            return .set(path, try JSONParser.parse(data).node)
        case Self.updateKind:
            let entries = try JSONParser.parseUpdate(data).map { entry in
                ResolvedWrite.UpdateEntry(path: entry.path, value: entry.value.node)
            }
            return .update(path, entries)
        default:
            throw StoreError.corrupt("unknown log record kind \(kind) at sequence \(sequence)")
        }
    }
}
