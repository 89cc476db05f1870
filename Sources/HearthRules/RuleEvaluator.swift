import Foundation
import HearthCore
import Synchronization

/// The `query` variable of a `.read` rule. A read without a query has the defaults (all false / null).
public struct RuleQuery: Sendable, Equatable {
    public var orderByKey = false
    public var orderByPriority = false
    public var orderByValue = false
    /// The child path ordered by, or nil.
    public var orderByChild: String?
    /// Primitive bounds (`.null` when absent).
    public var startAt: Node = .null
    public var endAt: Node = .null
    public var equalTo: Node = .null
    public var limitToFirst: Int?
    public var limitToLast: Int?

    public init(
        orderByKey: Bool = false, orderByPriority: Bool = false, orderByValue: Bool = false,
        orderByChild: String? = nil, startAt: Node = .null, endAt: Node = .null, equalTo: Node = .null,
        limitToFirst: Int? = nil, limitToLast: Int? = nil
    ) {
        self.orderByKey = orderByKey
        self.orderByPriority = orderByPriority
        self.orderByValue = orderByValue
        self.orderByChild = orderByChild
        self.startAt = startAt
        self.endAt = endAt
        self.equalTo = equalTo
        self.limitToFirst = limitToFirst
        self.limitToLast = limitToLast
    }
}

/// What a rule expression is evaluated against.
public struct RuleContext: Sendable {
    /// `.null` when signed out, else an object with `uid`, `provider` and `token`.
    public var auth: Node
    /// Server time in ms since the epoch.
    public var now: Int64
    /// The whole database before the operation.
    public var root: Node
    /// The whole database as it would be after the write (`nil` for reads: `newData` is an error).
    public var newRoot: Node?
    /// Where the rule is (the `data` / `newData` location).
    public var location: Path
    /// Wildcard bindings, keyed by name with or without the leading `$`.
    public var wildcards: [String: String]
    /// The `query` variable.
    public var query: RuleQuery
    /// The node at `location` in `root` and in `newRoot`, when the caller already has them:
    /// `data` and `newData` then cost no lookup from the root.
    public var dataNode: Node?
    public var newDataNode: Node?

    public init(
        auth: Node = .null, now: Int64 = 0, root: Node = .null, newRoot: Node? = nil,
        location: Path = .root, wildcards: [String: String] = [:], query: RuleQuery = RuleQuery()
    ) {
        self.auth = auth
        self.now = now
        self.root = root
        self.newRoot = newRoot
        self.location = location
        self.wildcards = wildcards
        self.query = query
    }
}

/// Why an expression failed at run time (which makes it false).
public struct RuleEvaluationError: Error, Sendable, Hashable, CustomStringConvertible {
    public let message: String
    /// Offset in the expression text of the part that failed.
    public let offset: Int
    public var description: String { message }
}

/// A snapshot as rules see it: a location in one version of the tree.
public struct RuleSnapshot: Sendable, Equatable {
    public let tree: Node
    public let path: Path
    /// The node at `path`, when known: navigating down from it avoids a lookup from the root.
    let resolved: Node?

    public init(tree: Node, path: Path) {
        self.init(tree: tree, path: path, resolved: nil)
    }

    init(tree: Node, path: Path, resolved: Node?) {
        self.tree = tree
        self.path = path
        self.resolved = resolved
    }

    public var node: Node { resolved ?? tree.child(at: path) }

    /// The snapshot at `relative` below this one.
    func child(_ relative: Path) -> RuleSnapshot {
        RuleSnapshot(tree: tree, path: path.appending(relative), resolved: resolved?.child(at: relative))
    }

    public static func == (lhs: RuleSnapshot, rhs: RuleSnapshot) -> Bool {
        lhs.tree == rhs.tree && lhs.path == rhs.path
    }
}

/// A value during evaluation.
public enum RuleValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    /// A map such as `auth` or `auth.token` (never empty).
    case map(Node)
    /// What `val()` gives for a node with children: not null, equal to nothing.
    case nonPrimitive
    case snapshot(RuleSnapshot)
    case query(RuleQuery)
    case regex(pattern: String, flags: String)
    case array([RuleValue])

    /// A database value as an expression value: leaves as primitives, objects as maps.
    init(_ node: Node) {
        switch node.unprioritized {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .int(let value): self = .number(Double(value))
        case .double(let value): self = .number(value)
        case .string(let text): self = .string(text)
        case .object, .prioritized: self = .map(node.unprioritized)
        }
    }

    var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .number: return "number"
        case .string: return "string"
        case .map: return "object"
        case .nonPrimitive: return "non-primitive value"
        case .snapshot: return "RuleDataSnapshot"
        case .query: return "query"
        case .regex: return "regular expression"
        case .array: return "array"
        }
    }
}

extension RuleExpression {
    /// True only when the expression evaluates to the boolean `true`; any run-time error is false.
    public func evaluate(in context: RuleContext) -> Bool {
        (try? value(in: context)) == .bool(true)
    }

    /// The value of the expression, or the error that makes it false.
    public func value(in context: RuleContext) throws(RuleEvaluationError) -> RuleValue {
        switch kind {
        case .null: return .null
        case .bool(let flag): return .bool(flag)
        case .number(let number): return .number(number)
        case .string(let text): return .string(text)
        case .regex(let pattern, let flags): return .regex(pattern: pattern, flags: flags)
        case .array(let items):
            var values: [RuleValue] = []
            for item in items { values.append(try item.value(in: context)) }
            return .array(values)
        case .identifier(let name): return try identifier(name, in: context)
        case .member(let object, let name): return try member(name, of: try object.value(in: context))
        case .call(let object, let name, let arguments):
            return try call(name, on: try object.value(in: context), arguments: arguments, in: context)
        case .unary(let op, let operand):
            let value = try operand.value(in: context)
            switch (op, value) {
            case (.not, .bool(let flag)): return .bool(!flag)
            case (.negate, .number(let number)): return .number(-number)
            default: throw fail("\(op.rawValue) cannot be applied to a \(value.typeName)")
            }
        case .binary(let op, let left, let right):
            return try binary(op, left, right, in: context)
        case .conditional(let condition, let then, let otherwise):
            switch try condition.value(in: context) {
            case .bool(true): return try then.value(in: context)
            case .bool(false): return try otherwise.value(in: context)
            case let other: throw fail("the condition of ?: must be a boolean, not a \(other.typeName)")
            }
        }
    }

    private func fail(_ message: String) -> RuleEvaluationError {
        RuleEvaluationError(message: message, offset: offset)
    }

    private func identifier(_ name: String, in context: RuleContext) throws(RuleEvaluationError) -> RuleValue {
        switch name {
        case "auth": return RuleValue(context.auth)
        case "now": return .number(Double(context.now))
        case "root": return .snapshot(RuleSnapshot(tree: context.root, path: .root, resolved: context.root))
        case "data": return .snapshot(RuleSnapshot(tree: context.root, path: context.location, resolved: context.dataNode))
        case "newData":
            guard let newRoot = context.newRoot else { throw fail("newData is only available in .write and .validate rules") }
            return .snapshot(RuleSnapshot(tree: newRoot, path: context.location, resolved: context.newDataNode))
        case "query": return .query(context.query)
        default:
            if name.hasPrefix("$") {
                if let bound = context.wildcards[name] ?? context.wildcards[String(name.dropFirst())] {
                    return .string(bound)
                }
            }
            throw fail("unknown variable \(name)")
        }
    }

    private func member(_ name: String, of object: RuleValue) throws(RuleEvaluationError) -> RuleValue {
        switch object {
        case .null: return .null
        case .map(let node): return RuleValue(node.child(ChildKey(name)))
        case .string(let text):
            if name == "length" { return .number(Double(text.utf16.count)) }
            if Self.stringMethods.contains(name) { throw fail("\(name) is a method; call it with ()") }
            return .null
        case .query(let query):
            switch name {
            case "orderByKey": return .bool(query.orderByKey)
            case "orderByPriority": return .bool(query.orderByPriority)
            case "orderByValue": return .bool(query.orderByValue)
            case "orderByChild": return query.orderByChild.map(RuleValue.string) ?? .null
            case "startAt": return RuleValue(query.startAt)
            case "endAt": return RuleValue(query.endAt)
            case "equalTo": return RuleValue(query.equalTo)
            case "limitToFirst": return query.limitToFirst.map { .number(Double($0)) } ?? .null
            case "limitToLast": return query.limitToLast.map { .number(Double($0)) } ?? .null
            default: throw fail("query has no property \(name)")
            }
        case .snapshot: throw fail("a RuleDataSnapshot has no property \(name); methods need ()")
        default: return .null
        }
    }

    static let stringMethods: Set<String> = [
        "contains", "beginsWith", "endsWith", "replace", "toLowerCase", "toUpperCase", "matches",
    ]

    private func call(
        _ name: String, on object: RuleValue, arguments: [RuleExpression], in context: RuleContext
    ) throws(RuleEvaluationError) -> RuleValue {
        var values: [RuleValue] = []
        for argument in arguments { values.append(try argument.value(in: context)) }
        switch object {
        case .snapshot(let snapshot): return try snapshotMethod(name, on: snapshot, values)
        case .string(let text): return try stringMethod(name, on: text, values)
        default: throw fail("cannot call \(name)() on a \(object.typeName)")
        }
    }

    private func stringArgument(_ values: [RuleValue], _ index: Int, of name: String) throws(RuleEvaluationError) -> String {
        guard index < values.count, case .string(let text) = values[index] else {
            throw fail("\(name)() needs a string argument")
        }
        return text
    }

    private func expectArguments(_ values: [RuleValue], _ count: Int, of name: String) throws(RuleEvaluationError) {
        guard values.count == count else { throw fail("\(name)() takes \(count) argument(s), not \(values.count)") }
    }

    private func snapshotMethod(
        _ name: String, on snapshot: RuleSnapshot, _ values: [RuleValue]
    ) throws(RuleEvaluationError) -> RuleValue {
        switch name {
        case "val":
            try expectArguments(values, 0, of: name)
            let node = snapshot.node
            return node.children == nil ? RuleValue(node) : .nonPrimitive
        case "child":
            try expectArguments(values, 1, of: name)
            let relative = try stringArgument(values, 0, of: name)
            return .snapshot(snapshot.child(Self.relativePath(relative)))
        case "parent":
            try expectArguments(values, 0, of: name)
            guard let parent = snapshot.path.parent else { throw fail("parent() of the root") }
            return .snapshot(RuleSnapshot(tree: snapshot.tree, path: parent))
        case "hasChild":
            try expectArguments(values, 1, of: name)
            let relative = try stringArgument(values, 0, of: name)
            return .bool(!snapshot.node.child(at: Self.relativePath(relative)).isNull)
        case "hasChildren":
            let node = snapshot.node
            if values.isEmpty { return .bool(node.childCount > 0) }
            try expectArguments(values, 1, of: name)
            guard case .array(let items) = values[0], !items.isEmpty else {
                throw fail("hasChildren() takes a non-empty array of strings")
            }
            var all = true
            for item in items {
                guard case .string(let key) = item else { throw fail("hasChildren() takes a non-empty array of strings") }
                if node.child(at: Self.relativePath(key)).isNull { all = false }
            }
            return .bool(all)
        case "exists":
            try expectArguments(values, 0, of: name)
            return .bool(!snapshot.node.isNull)
        case "getPriority":
            try expectArguments(values, 0, of: name)
            switch snapshot.node.priority {
            case .number(let number): return .number(number)
            case .string(let text): return .string(text)
            case nil: return .null
            }
        case "isNumber":
            try expectArguments(values, 0, of: name)
            return .bool(snapshot.node.numberValue != nil)
        case "isString":
            try expectArguments(values, 0, of: name)
            if case .string = snapshot.node.unprioritized { return .bool(true) }
            return .bool(false)
        case "isBoolean":
            try expectArguments(values, 0, of: name)
            if case .bool = snapshot.node.unprioritized { return .bool(true) }
            return .bool(false)
        default:
            throw fail("a RuleDataSnapshot has no method \(name)()")
        }
    }

    /// A `/`-separated relative path (empty segments ignored); keys are not validated, as an
    /// invalid key simply names no data.
    static func relativePath(_ text: String) -> Path {
        // Most arguments are one key: no need to split.
        if !text.isEmpty, !text.utf8.contains(UInt8(ascii: "/")) { return Path(keys: [ChildKey(text)]) }
        // At the "/" scalar: a "/" followed by a combining mark is one Character but two keys.
        return Path(keys: text.unicodeScalars.split(separator: "/", omittingEmptySubsequences: true).map { ChildKey(String($0)) })
    }

    private func stringMethod(_ name: String, on text: String, _ values: [RuleValue]) throws(RuleEvaluationError) -> RuleValue {
        switch name {
        case "contains":
            try expectArguments(values, 1, of: name)
            return .bool(text.containsScalars(try stringArgument(values, 0, of: name)))
        case "beginsWith":
            try expectArguments(values, 1, of: name)
            return .bool(text.unicodeScalars.starts(with: try stringArgument(values, 0, of: name).unicodeScalars))
        case "endsWith":
            try expectArguments(values, 1, of: name)
            let suffix = try stringArgument(values, 0, of: name)
            return .bool(text.unicodeScalars.reversed().starts(with: suffix.unicodeScalars.reversed()))
        case "replace":
            try expectArguments(values, 2, of: name)
            let target = try stringArgument(values, 0, of: name)
            let replacement = try stringArgument(values, 1, of: name)
            return .string(text.replacingAll(target, with: replacement))
        case "toLowerCase":
            try expectArguments(values, 0, of: name)
            return .string(text.lowercased())
        case "toUpperCase":
            try expectArguments(values, 0, of: name)
            return .string(text.uppercased())
        case "matches":
            try expectArguments(values, 1, of: name)
            guard case .regex(let pattern, let flags) = values[0] else {
                throw fail("matches() takes a regular expression literal")
            }
            guard let regex = RegexCache.shared.regex(pattern: pattern, flags: flags) else {
                throw fail("invalid regular expression /\(pattern)/")
            }
            let range = NSRange(location: 0, length: text.utf16.count)
            return .bool(regex.firstMatch(in: text, options: [], range: range) != nil)
        default:
            throw fail("a string has no method \(name)()")
        }
    }

    private func binary(
        _ op: BinaryOperator, _ leftExpression: RuleExpression, _ rightExpression: RuleExpression,
        in context: RuleContext
    ) throws(RuleEvaluationError) -> RuleValue {
        let left = try leftExpression.value(in: context)
        // && and || short-circuit; both sides must be booleans.
        if op == .and || op == .or {
            guard case .bool(let flag) = left else { throw fail("\(op.rawValue) needs booleans, not a \(left.typeName)") }
            if op == .and && !flag { return .bool(false) }
            if op == .or && flag { return .bool(true) }
            let right = try rightExpression.value(in: context)
            guard case .bool = right else { throw fail("\(op.rawValue) needs booleans, not a \(right.typeName)") }
            return right
        }
        let right = try rightExpression.value(in: context)
        switch op {
        case .add:
            switch (left, right) {
            case let (.number(a), .number(b)): return .number(a + b)
            case let (.string(a), .string(b)): return .string(a + b)
            default: throw fail("+ needs two numbers or two strings, not a \(left.typeName) and a \(right.typeName)")
            }
        case .subtract, .multiply, .divide, .remainder:
            guard case .number(let a) = left, case .number(let b) = right else {
                throw fail("\(op.rawValue) needs two numbers, not a \(left.typeName) and a \(right.typeName)")
            }
            switch op {
            case .subtract: return .number(a - b)
            case .multiply: return .number(a * b)
            case .divide: return .number(b == 0 ? .nan : a / b)
            default: return .number(a.truncatingRemainder(dividingBy: b))
            }
        case .equal, .identical, .notEqual, .notIdentical:
            let same = try identical(left, right)
            return .bool(op == .equal || op == .identical ? same : !same)
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            let order: Int
            switch (left, right) {
            case let (.number(a), .number(b)):
                if a.isNaN || b.isNaN { return .bool(false) }
                order = a < b ? -1 : (a > b ? 1 : 0)
            case let (.string(a), .string(b)):
                // JavaScript compares strings by UTF-16 code units.
                order = a.utf16.lexicographicallyPrecedes(b.utf16) ? -1 : (a == b ? 0 : 1)
            case (.null, .null):
                order = 0
            default:
                throw fail("\(op.rawValue) needs two numbers or two strings, not a \(left.typeName) and a \(right.typeName)")
            }
            switch op {
            case .less: return .bool(order < 0)
            case .lessOrEqual: return .bool(order <= 0)
            case .greater: return .bool(order > 0)
            default: return .bool(order >= 0)
            }
        case .and, .or:
            fatalError("handled above")
        }
    }

    /// `===` without coercion. Maps (like `auth`) compare by content; snapshots, regexes and
    /// arrays cannot be compared.
    private func identical(_ left: RuleValue, _ right: RuleValue) throws(RuleEvaluationError) -> Bool {
        switch (left, right) {
        case (.snapshot, _), (_, .snapshot), (.regex, _), (_, .regex), (.array, _), (_, .array), (.query, _), (_, .query):
            throw fail("a \(left.typeName) cannot be compared with a \(right.typeName)")
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.number(a), .number(b)): return a == b
        case let (.string(a), .string(b)): return a.unicodeScalars.elementsEqual(b.unicodeScalars)
        case let (.map(a), .map(b)): return a == b
        default: return false
        }
    }
}

/// Compiled regular expressions, shared across evaluations.
final class RegexCache: Sendable {
    static let shared = RegexCache()

    private struct Key: Hashable {
        let pattern: String
        let flags: String
    }

    private final class Box: @unchecked Sendable {
        let regex: NSRegularExpression?
        init(_ regex: NSRegularExpression?) { self.regex = regex }
    }

    private let cache = Mutex<[Key: Box]>([:])

    func regex(pattern: String, flags: String) -> NSRegularExpression? {
        let key = Key(pattern: pattern, flags: flags)
        if let box = cache.withLock({ $0[key] }) { return box.regex }
        var options: NSRegularExpression.Options = []
        if flags.contains("i") { options.insert(.caseInsensitive) }
        let regex = try? NSRegularExpression(pattern: pattern, options: options)
        cache.withLock { entries in
            if entries.count > 1000 { entries.removeAll() }
            entries[key] = Box(regex)
        }
        return regex
    }
}

extension RuleQuery {
    /// The `query` variable for a query read (the defaults for a plain read).
    public init(_ query: Query?) {
        self.init()
        guard let query else { return }
        switch query.order {
        case .key: orderByKey = true
        case .priority: orderByPriority = true
        case .value: orderByValue = true
        case .child(let path): orderByChild = path.keys.map(\.string).joined(separator: "/")
        }
        if let start = query.start, let end = query.end, start == end, start.inclusive {
            equalTo = start.value
        } else {
            startAt = query.start?.value ?? .null
            endAt = query.end?.value ?? .null
        }
        switch query.limit {
        case .first(let count): limitToFirst = count
        case .last(let count): limitToLast = count
        case nil: break
        }
    }
}
