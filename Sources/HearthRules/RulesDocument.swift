import HearthCore

/// A parsed security rules document: a tree of rule nodes mirroring the data paths, with
/// `.read`, `.write`, `.validate` and `.indexOn` at each level and at most one `$wildcard`.
public struct RulesDocument: Sendable {
    /// A rule expression as written (`true`, `false`, or expression text) and where it is.
    public struct Expression: Sendable, Hashable {
        public let source: String
        public let position: SourcePosition
    }

    /// One level of the rules tree.
    public struct Node: Sendable {
        public var read: Expression?
        public var write: Expression?
        public var validate: Expression?
        /// Child paths (`"a/b"`) or `".value"` that queries here may order by.
        public var indexOn: [String] = []
        /// Literal child keys.
        public var children: [String: Node] = [:]
        /// The `$name` child, if any.
        public var wildcard: Wildcard?
    }

    /// A `$name` child rule (a class, because a rule node contains its wildcard's node).
    public final class Wildcard: Sendable {
        public let name: String
        public let node: Node

        init(name: String, node: Node) {
            self.name = name
            self.node = node
        }
    }

    /// The top of the tree (the `"rules"` object).
    public let root: Node
    /// The text the document was parsed from.
    public let source: String

    /// Rules that deny everything: what a new database starts with.
    public static let closed = try! RulesDocument(parsing: #"{"rules":{".read":false,".write":false}}"#)

    /// Parses and checks a rules document.
    /// - Throws: ``RulesError`` for the first problem, with its line and column.
    public init(parsing text: String) throws(RulesError) {
        var errors: [RulesError] = []
        let root = try Self.structure(of: text, errors: &errors)
        if let first = errors.first { throw first }
        self.root = root
        source = text
    }

    /// Every problem in a rules document, in file order: its JSON syntax (only the first such
    /// error, as parsing stops there), its structure and every expression.
    public static func problems(in text: String) -> [RulesError] {
        var errors: [RulesError] = []
        do {
            let root = try structure(of: text, errors: &errors)
            let document = RulesDocument(root: root, source: text)
            errors += document.compileErrors()
        } catch {
            errors.append(error)
        }
        return errors.sorted { ($0.position.line, $0.position.column) < ($1.position.line, $1.position.column) }
    }

    private init(root: Node, source: String) {
        self.root = root
        self.source = source
    }

    /// The rule tree of `text`; structural problems are collected in `errors`.
    /// - Throws: ``RulesError`` when the text is not a JSON document with a `"rules"` object.
    private static func structure(of text: String, errors: inout [RulesError]) throws(RulesError) -> Node {
        let value = try RulesSourceParser.parse(text)
        guard case .object(let members, let position) = value else {
            throw RulesError("the rules document must be an object", at: value.position)
        }
        guard let rules = members.last(where: { $0.key == "rules" }) else {
            throw RulesError("the rules document needs a \"rules\" key", at: position)
        }
        for member in members where member.key != "rules" {
            errors.append(RulesError("unknown top-level key \"\(member.key)\"", at: member.keyPosition))
        }
        return node(from: rules.value, wildcardNames: [], errors: &errors)
    }

    private static func node(from value: SourceValue, wildcardNames: Set<String>, errors: inout [RulesError]) -> Node {
        guard case .object(let members, _) = value else {
            errors.append(RulesError("a rule must be an object", at: value.position))
            return Node()
        }
        var node = Node()
        for member in members {
            do throws(RulesError) {
                try add(member, to: &node, wildcardNames: wildcardNames, errors: &errors)
            } catch {
                errors.append(error)
            }
        }
        return node
    }

    private static func add(
        _ member: SourceValue.Member, to node: inout Node, wildcardNames: Set<String>, errors: inout [RulesError]
    ) throws(RulesError) {
        switch member.key {
        case ".read": node.read = try expression(member.value, name: ".read")
        case ".write": node.write = try expression(member.value, name: ".write")
        case ".validate": node.validate = try expression(member.value, name: ".validate")
        case ".indexOn":
            switch member.value {
            case .string(let field, let position):
                try checkIndexField(field, at: position)
                node.indexOn = [field]
            case .array(let items, _):
                node.indexOn = []
                for item in items {
                    guard case .string(let field, let position) = item else {
                        throw RulesError(".indexOn entries must be strings", at: item.position)
                    }
                    try checkIndexField(field, at: position)
                    node.indexOn.append(field)
                }
            default:
                throw RulesError(".indexOn must be a string or an array of strings", at: member.value.position)
            }
        default:
            if member.key.hasPrefix(".") {
                throw RulesError("unknown rule \"\(member.key)\"", at: member.keyPosition)
            }
            if member.key.hasPrefix("$") {
                let name = member.key
                guard node.wildcard == nil else {
                    throw RulesError("only one $wildcard is allowed at each level", at: member.keyPosition)
                }
                guard name.count > 1, Path.isValidKey(String(name.dropFirst())) else {
                    throw RulesError("invalid wildcard name \"\(name)\"", at: member.keyPosition)
                }
                guard !wildcardNames.contains(name) else {
                    throw RulesError("the wildcard \(name) is already used above", at: member.keyPosition)
                }
                let child = Self.node(from: member.value, wildcardNames: wildcardNames.union([name]), errors: &errors)
                node.wildcard = Wildcard(name: name, node: child)
            } else {
                guard Path.isValidKey(member.key) else {
                    throw RulesError("invalid key \"\(member.key)\"", at: member.keyPosition)
                }
                node.children[member.key] = Self.node(from: member.value, wildcardNames: wildcardNames, errors: &errors)
            }
        }
    }

    private static func expression(_ value: SourceValue, name: String) throws(RulesError) -> Expression {
        switch value {
        case .bool(let flag, let position): return Expression(source: flag ? "true" : "false", position: position)
        case .string(let text, let position): return Expression(source: text, position: position)
        default: throw RulesError("\(name) must be a boolean or a string expression", at: value.position)
        }
    }

    private static func checkIndexField(_ field: String, at position: SourcePosition) throws(RulesError) {
        if field == ".value" { return }
        guard (try? Path(parsing: field)).map({ !$0.isRoot }) == true else {
            throw RulesError("invalid .indexOn field \"\(field)\"", at: position)
        }
    }

    // MARK: - Lookup

    /// The rule nodes matched along `path` (root first), with the wildcard bindings so far.
    /// Literal keys win over the wildcard; the walk stops where no rule matches.
    public func nodes(along path: Path) -> [(node: Node, bindings: [String: String])] {
        var result: [(node: Node, bindings: [String: String])] = [(root, [:])]
        var current = root
        var bindings: [String: String] = [:]
        for key in path.keys {
            // The rule's key must be the data key's very code units, which a String lookup,
            // blind to Unicode normalization, does not check.
            if let index = current.children.index(forKey: key.string), ChildKey(current.children[index].key) == key {
                current = current.children[index].value
            } else if let wildcard = current.wildcard {
                bindings[wildcard.name] = key.string
                current = wildcard.node
            } else {
                break
            }
            result.append((current, bindings))
        }
        return result
    }

    /// The rule node that governs exactly `path`, if the rules reach that deep.
    public func node(at path: Path) -> Node? {
        let matched = nodes(along: path)
        return matched.count == path.count + 1 ? matched.last?.node : nil
    }

    /// True when the rules at `path` declare an index for `order` (`$key` and `$priority` need none).
    public func declaresIndex(at path: Path, for order: Query.Order) -> Bool {
        switch order {
        case .key, .priority: return true
        case .value: return node(at: path)?.indexOn.contains(".value") ?? false
        case .child(let child):
            let name = child.keys.map(\.string).joined(separator: "/")
            return node(at: path)?.indexOn.contains(name) ?? false
        }
    }

    /// The `.indexOn` text Firebase's error names for an ordering.
    public static func indexName(for order: Query.Order) -> String {
        switch order {
        case .value: return ".value"
        default: return order.description
        }
    }

    /// The document as strict JSON (comments removed), as `format=strict` returns it.
    public func strictJSON() throws(RulesError) -> String {
        let value = try RulesSourceParser.parse(source)
        var output = ""
        Self.render(value, indent: 0, into: &output)
        return output
    }

    private static func render(_ value: SourceValue, indent: Int, into output: inout String) {
        let pad = String(repeating: "  ", count: indent + 1)
        switch value {
        case .null: output += "null"
        case .bool(let flag, _): output += flag ? "true" : "false"
        case .number(let number, _):
            output += number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
        case .string(let text, _): output += JSONWriter.string(.string(text))
        case .array(let items, _):
            output += "["
            for (offset, item) in items.enumerated() {
                output += offset == 0 ? "\n" + pad : ",\n" + pad
                render(item, indent: indent + 1, into: &output)
            }
            output += items.isEmpty ? "]" : "\n" + String(repeating: "  ", count: indent) + "]"
        case .object(let members, _):
            output += "{"
            for (offset, member) in members.enumerated() {
                output += offset == 0 ? "\n" + pad : ",\n" + pad
                output += JSONWriter.string(.string(member.key)) + ": "
                render(member.value, indent: indent + 1, into: &output)
            }
            output += members.isEmpty ? "}" : "\n" + String(repeating: "  ", count: indent) + "}"
        }
    }
}
