/// Which databases a database trigger watches, as Firebase writes it: a name
/// (`my-project-default-rtdb`), `*` for every database, a name with `*` standing for any run
/// of characters (`my-project-*`), or `{name}` to capture the database's name as a parameter.
public struct InstancePattern: Sendable, Hashable, CustomStringConvertible {
    /// The pattern as written.
    public let text: String
    /// The parameter the whole name is captured as, for `{name}`.
    public let capture: String?

    /// - Throws: ``FunctionError`` for an empty pattern, a `/`, or a malformed capture.
    public init(parsing text: String, function: String) throws {
        guard !text.isEmpty, !text.contains("/") else {
            throw FunctionError.invalidDefinition(function: function, "the instance \"\(text)\" is not a database name or pattern")
        }
        if text.hasPrefix("{") || text.hasSuffix("}") {
            var inner = text.dropFirst().dropLast()
            if inner.hasSuffix("=*") { inner = inner.dropLast(2) }
            guard text.hasPrefix("{"), text.hasSuffix("}"), !inner.isEmpty,
                inner.unicodeScalars.allSatisfy({ $0 == "_" || $0.properties.isAlphabetic || ("0"..."9").contains($0) })
            else { throw FunctionError.invalidDefinition(function: function, "the instance \"\(text)\" is not a capture: write {name}") }
            capture = String(inner)
        } else {
            capture = nil
        }
        self.text = text
    }

    /// True when the database `name` is one the pattern names.
    public func matches(_ name: String) -> Bool {
        if capture != nil { return true }
        return Self.glob(Array(text.unicodeScalars)[...], Array(name.unicodeScalars)[...])
    }

    /// The parameter the pattern gives the database `name`.
    public func parameters(for name: String) -> [String: String] {
        capture.map { [$0: name] } ?? [:]
    }

    public var description: String { text }

    /// `*` matches any run of characters (none included); everything else itself.
    private static func glob(_ pattern: ArraySlice<Unicode.Scalar>, _ name: ArraySlice<Unicode.Scalar>) -> Bool {
        guard let first = pattern.first else { return name.isEmpty }
        if first == "*" {
            var rest = name
            while true {
                if glob(pattern.dropFirst(), rest) { return true }
                guard !rest.isEmpty else { return false }
                rest = rest.dropFirst()
            }
        }
        guard let head = name.first, head == first else { return false }
        return glob(pattern.dropFirst(), name.dropFirst())
    }
}
