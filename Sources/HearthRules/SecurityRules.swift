import HearthCore

/// A rules document compiled for enforcement: decides whether a read or a write is allowed,
/// with Firebase's semantics.
///
/// - `.read` and `.write` cascade: the first rule from the root down to the target that
///   evaluates to `true` grants the target and everything below it. Rules are not filters.
/// - `.validate` does not cascade: every one on the write path and in the new subtree must
///   pass, except where the new data is null.
/// - An expression that fails at run time is false.
public struct SecurityRules: Sendable {
    /// The document the rules were compiled from.
    public var document: RulesDocument { compiled.document }
    var root: CompiledRule { compiled.root }

    /// Held by reference: rules are handed out for every request (a copy of the document's
    /// nested values cost a dozen reference-count operations each time).
    private let compiled: Compiled

    private final class Compiled: Sendable {
        let document: RulesDocument
        let root: CompiledRule

        init(document: RulesDocument, root: CompiledRule) {
            self.document = document
            self.root = root
        }
    }

    /// Rules that deny everything: what a new database starts with.
    public static let closed = try! SecurityRules(RulesDocument.closed)

    /// Compiles every expression of `document`.
    /// - Throws: ``RulesError`` for the first expression that does not compile.
    public init(_ document: RulesDocument) throws(RulesError) {
        let expressions = try document.compileAll()
        compiled = Compiled(document: document, root: CompiledRule(document.root, compiled: expressions))
    }

    /// Parses and compiles a rules document.
    public init(parsing text: String) throws(RulesError) {
        try self.init(RulesDocument(parsing: text))
    }

    /// What the checks are evaluated with besides the data.
    public struct Requester: Sendable {
        /// The `auth` variable: `.null` when signed out.
        public var auth: Node
        /// Server time in milliseconds.
        public var now: Int64

        public init(auth: Node, now: Int64) {
            self.auth = auth
            self.now = now
        }
    }

    /// Why a read was allowed.
    public struct ReadGrant: Sendable, Equatable {
        /// Where the granting rule is.
        public let location: Path
        /// True when the granting rule looks at data (`root` or `data`), so a later write
        /// may revoke the grant.
        public let dependsOnData: Bool

        public init(location: Path, dependsOnData: Bool) {
            self.location = location
            self.dependsOnData = dependsOnData
        }
    }

    /// Why a write was refused.
    public struct WriteDenial: Error, Sendable, Equatable, CustomStringConvertible {
        public enum Reason: Sendable, Equatable {
            /// No `.write` rule from the root to the path granted it.
            case noWriteGrant
            /// A `.validate` rule at `location` was not true.
            case validationFailed(location: Path)
        }

        /// The written path that was refused.
        public let path: Path
        public let reason: Reason

        public var description: String {
            switch reason {
            case .noWriteGrant: return "no .write rule allows writing \(path)"
            case .validationFailed(let location): return "the .validate rule at \(location) failed for a write to \(path)"
            }
        }
    }

    // MARK: - Reads

    /// Whether `requester` may read `path` (with `query` for query reads), given the data `root`.
    /// - Parameter trace: records every `.read` evaluated (the rules simulator); nil to enforce.
    /// - Returns: the grant, or nil when the read is denied.
    public func read(
        _ path: Path, by requester: Requester, root data: Node, query: RuleQuery = RuleQuery(), trace: RuleTrace? = nil
    ) -> ReadGrant? {
        let path = Self.rulePath(path)
        var context = RuleContext(auth: requester.auth, now: requester.now, root: data, query: query)
        context.dataNode = data
        var rule = root
        var depth = 0
        while true {
            if let read = rule.read, read.passes(.read, in: context, trace: trace) {
                return ReadGrant(location: context.location, dependsOnData: read.usesData)
            }
            guard depth < path.count, let next = rule.descend(path.keys[depth], context: &context) else { return nil }
            rule = next
            depth += 1
        }
    }

    // MARK: - Writes

    /// Checks a write that changes each of `paths` (one for a set, one per entry for a
    /// multi-path update) and turns the data `before` into `after`.
    ///
    /// Each path must be granted by a `.write` rule and pass every `.validate` rule on its way
    /// and in its new subtree, evaluated against the combined result. All or nothing.
    /// - Parameter trace: records every `.write` and `.validate` evaluated (the rules
    ///   simulator); nil to enforce.
    /// - Throws: ``WriteDenial`` for the first path that is refused.
    public func authorizeWrite(
        changing paths: [Path], by requester: Requester, before: Node, after: Node, trace: RuleTrace? = nil
    ) throws(WriteDenial) {
        var validated = Set<Path>()
        for path in paths {
            try authorizeWrite(
                at: Self.rulePath(path), by: requester, before: before, after: after, validated: &validated, trace: trace)
        }
    }

    private func authorizeWrite(
        at path: Path, by requester: Requester, before: Node, after: Node, validated: inout Set<Path>, trace: RuleTrace?
    ) throws(WriteDenial) {
        var context = RuleContext(auth: requester.auth, now: requester.now, root: before, newRoot: after)
        context.dataNode = before
        context.newDataNode = after
        var rule: CompiledRule? = root
        var granted = false
        var depth = 0
        // Walk the rules from the root to the path: the first true .write grants; every
        // .validate on the way runs where the new data is not null.
        while let current = rule {
            if !granted, let write = current.write, write.passes(.write, in: context, trace: trace) { granted = true }
            if let validate = current.validate, !validated.contains(context.location),
                !(context.newDataNode ?? after.child(at: context.location)).isNull
            {
                guard validate.passes(.validate, in: context, trace: trace) else {
                    throw WriteDenial(path: path, reason: .validationFailed(location: context.location))
                }
                validated.insert(context.location)
            }
            if depth == path.count { break }
            rule = current.descend(path.keys[depth], context: &context)
            depth += 1
        }
        guard granted else {
            // A .write rule can still grant below the path only for writes that touch no more
            // than that deeper location, which a write here does not; so it is denied.
            throw WriteDenial(path: path, reason: .noWriteGrant)
        }
        // The new subtree: every .validate of a rule below the path whose new data is not null.
        if let rule, rule.validatesBelow {
            try validateSubtree(
                rule, value: context.newDataNode ?? after.child(at: path), context: context, path: path, trace: trace)
        }
    }

    private func validateSubtree(
        _ rule: CompiledRule, value: Node, context: RuleContext, path: Path, trace: RuleTrace?
    ) throws(WriteDenial) {
        guard let children = value.children else { return }
        for (key, child) in children where !child.isNull {
            var childContext = context
            guard let childRule = rule.descend(key, context: &childContext, newChild: child) else { continue }
            if let validate = childRule.validate, !validate.passes(.validate, in: childContext, trace: trace) {
                throw WriteDenial(path: path, reason: .validationFailed(location: childContext.location))
            }
            if childRule.validatesBelow {
                try validateSubtree(childRule, value: child, context: childContext, path: path, trace: trace)
            }
        }
    }

    /// What a write does at its path, for ``writeMayBeGranted(at:by:kind:)``.
    public enum WriteKind: Sendable {
        /// Replaces the value at the path (a delete too).
        case set
        /// Adds a child under a name chosen later.
        case push
        /// Sets paths below the path.
        case update
    }

    /// False when no write of `kind` at `path` by `requester` can be
    /// granted, whatever its data: each `.write` from the root to the path reads no data
    /// (`root`, `data`, `newData`) and is false. A server asks this before it reads a body,
    /// so that a write the path alone refuses costs it nothing. True means "maybe": the full
    /// check runs on the data.
    public func writeMayBeGranted(at path: Path, by requester: Requester, kind: WriteKind = .set) -> Bool {
        let path = Self.rulePath(path)
        var context = RuleContext(auth: requester.auth, now: requester.now)
        var rule: CompiledRule? = root
        var depth = 0
        while let current = rule {
            if let write = current.write, write.readsAnyData || write.passes(.write, in: context, trace: nil) {
                return true
            }
            if depth == path.count {
                switch kind {
                case .set: return false
                case .push:
                    // A push's new child is named later: its own `.write` may grant it.
                    return current.wildcard?.write != nil || current.children.values.contains { $0.write != nil }
                case .update:
                    // An update's entries are below the path, where any `.write` may grant them.
                    return current.writesBelow
                }
            }
            rule = current.descend(path.keys[depth], context: &context)
            depth += 1
        }
        return false
    }

    /// Rules address nodes, so a write to `x/.priority` is a write to `x`.
    static func rulePath(_ path: Path) -> Path {
        path.isPriorityPath ? (path.parent ?? .root) : path
    }
}

/// One level of compiled rules.
final class CompiledRule: Sendable {
    struct Rule: Sendable {
        let expression: RuleExpression
        /// The expression as written, and where (for traces).
        let source: RulesDocument.Expression
        /// True when the expression reads `root` or `data`.
        let usesData: Bool
        /// True when it reads `root`, `data` or `newData`.
        let readsAnyData: Bool
    }

    let read: Rule?
    let write: Rule?
    let validate: Rule?
    /// By key: a literal rule names exactly its key's code units (`"é"` is not `"e\u{301}"`).
    let children: [ChildKey: CompiledRule]
    let wildcardName: String?
    let wildcard: CompiledRule?
    /// True when some rule below this one has a `.validate`.
    let validatesBelow: Bool
    /// True when some rule below this one has a `.write`.
    let writesBelow: Bool

    init(_ node: RulesDocument.Node, compiled: [RulesDocument.Expression: RuleExpression]) {
        func rule(_ expression: RulesDocument.Expression?) -> Rule? {
            guard let expression, let parsed = compiled[expression] else { return nil }
            let usesData = parsed.identifiers.contains { $0.name == "root" || $0.name == "data" }
            let readsAnyData = usesData || parsed.identifiers.contains { $0.name == "newData" }
            return Rule(expression: parsed, source: expression, usesData: usesData, readsAnyData: readsAnyData)
        }
        read = rule(node.read)
        write = rule(node.write)
        validate = rule(node.validate)
        children = Dictionary(
            node.children.map { (ChildKey($0.key), CompiledRule($0.value, compiled: compiled)) }, uniquingKeysWith: { first, _ in first })
        wildcardName = node.wildcard?.name
        wildcard = node.wildcard.map { CompiledRule($0.node, compiled: compiled) }
        validatesBelow = children.values.contains { $0.validate != nil || $0.validatesBelow }
            || wildcard.map { $0.validate != nil || $0.validatesBelow } ?? false
        writesBelow = children.values.contains { $0.write != nil || $0.writesBelow }
            || wildcard.map { $0.write != nil || $0.writesBelow } ?? false
    }

    /// The rule for child `key` (a literal key wins over the wildcard), moving `context` to
    /// that child and binding the wildcard; nil when no rule reaches that far.
    /// - Parameter newChild: the child's new data when the caller has it at hand.
    func descend(_ key: ChildKey, context: inout RuleContext, newChild: Node? = nil) -> CompiledRule? {
        let next: CompiledRule
        if let child = children[key] {
            next = child
        } else if let wildcard, let wildcardName {
            context.wildcards[wildcardName] = key.string
            next = wildcard
        } else {
            return nil
        }
        context.location = context.location.child(key)
        // Follow the known nodes one level down (cheaper than a lookup from the root later);
        // in a subtree walk the old data is looked up only if a rule asks for it.
        if let newChild {
            context.newDataNode = newChild
            context.dataNode = nil
        } else {
            context.newDataNode = context.newDataNode?.child(key)
            context.dataNode = context.dataNode?.child(key)
        }
        return next
    }
}

extension SecurityRules {
    /// The `auth` variable for a signed-in user, from the claims of their ID token:
    /// `{"uid": sub, "provider": <sign-in provider>, "token": <all claims>}`.
    public static func authVariable(claims: Node) -> Node {
        let uid = claims.child(ChildKey("user_id")).isNull ? claims.child(ChildKey("sub")) : claims.child(ChildKey("user_id"))
        var provider = "custom"
        if case .string(let signIn) = claims.child(at: Path(keys: [ChildKey("firebase"), ChildKey("sign_in_provider")])) {
            // Firebase names providers without their domain: "google.com" is "google".
            provider = signIn.hasSuffix(".com") ? String(signIn.dropLast(4)) : signIn
        }
        return .object([
            (ChildKey("provider"), .string(provider)),
            (ChildKey("token"), claims),
            (ChildKey("uid"), uid),
        ])
    }
}
