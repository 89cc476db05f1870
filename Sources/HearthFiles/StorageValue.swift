/// A value in the storage rules language.
public enum StorageValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case float(Double)
    case string(String)
    case list([StorageValue])
    case map([String: StorageValue])
    /// A path such as the one `{path=**}` binds: its segments.
    case path([String])
    /// Nanoseconds since the epoch.
    case timestamp(Int64)
    /// Nanoseconds.
    case duration(Int64)

    /// The name `is` uses for this value's type.
    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "bool"
        case .int: "int"
        case .float: "float"
        case .string: "string"
        case .list: "list"
        case .map: "map"
        case .path: "path"
        case .timestamp: "timestamp"
        case .duration: "duration"
        }
    }

    /// Equality as the language has it: ints and floats compare by value, lists and maps
    /// element by element.
    func isEqual(to other: StorageValue) -> Bool {
        switch (self, other) {
        case (.int(let a), .float(let b)): Double(a) == b
        case (.float(let a), .int(let b)): a == Double(b)
        case (.list(let a), .list(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.isEqual(to: $1) }
        case (.map(let a), .map(let b)):
            a.count == b.count && a.allSatisfy { key, value in b[key].map { value.isEqual(to: $0) } ?? false }
        default: self == other
        }
    }
}
