import HearthCore

/// Storage security rules (`storage.rules`), compiled, deciding requests as Firebase does:
/// every `match` whose whole path matches the request's path is considered, and the request is
/// allowed when any `allow` for its method there is true. Anything else is denied; a condition
/// that fails (reads a missing field, divides by zero, …) grants nothing.
public struct StorageRules: Sendable {
    public let document: StorageRulesDocument

    /// Parses `source`.
    /// - Throws: ``StorageRulesSyntaxError`` with the line and column of the first problem.
    public init(parsing source: String) throws(StorageRulesSyntaxError) {
        document = try StorageRulesParser.parse(source)
    }

    /// Rules that allow nothing: what a server uses until it is given rules.
    public static let closed = try! StorageRules(parsing: "service firebase.storage {}")

    /// Rules that allow everything (tests and trusted single-user setups).
    public static let open = try! StorageRules(parsing: """
        rules_version = '2';
        service firebase.storage { match /b/{bucket}/o { match /{path=**} { allow read, write; } } }
        """)

    /// A request as the rules see it.
    public struct Request: Sendable {
        public var method: StorageRulesDocument.Method
        public var bucket: String
        /// The object's name, or for `list` the prefix listed (without trailing slashes).
        public var name: String
        /// The caller's ID-token claims; nil when signed out.
        public var authClaims: Node?
        /// Milliseconds since the epoch.
        public var time: Int64
        /// `request.resource`: the object as it would be after a create or update.
        public var incoming: StoredObject?
        /// `resource`: the object as it is (nil when none).
        public var existing: StoredObject?

        public init(
            method: StorageRulesDocument.Method, bucket: String, name: String, authClaims: Node?, time: Int64,
            incoming: StoredObject? = nil, existing: StoredObject? = nil
        ) {
            self.method = method
            self.bucket = bucket
            self.name = name
            self.authClaims = authClaims
            self.time = time
            self.incoming = incoming
            self.existing = existing
        }
    }

    /// Whether the rules allow `request`.
    public func allows(_ request: Request) -> Bool {
        if request.method == .list && document.version < 2 { return false }
        var segments = ["b", request.bucket, "o"]
        // At the "/" scalar, as the name is stored: "/" and a combining mark after it are one
        // Character, but the name's segments still end at the "/".
        segments += request.name.unicodeScalars.split(separator: "/").map(String.init)
        var functions: [String: StorageRulesDocument.Function] = [:]
        for function in document.functions { functions[function.name] = function }
        let scope = StorageScope(variables: Self.variables(for: request, path: segments), functions: functions)
        return allows(request.method, in: document.matches, segments: segments, from: 0, scope: scope)
    }

    private func allows(
        _ method: StorageRulesDocument.Method, in matches: [StorageRulesDocument.Match], segments: [String], from start: Int,
        scope: StorageScope
    ) -> Bool {
        for match in matches {
            for (end, bindings) in Self.positions(of: match.pattern[...], in: segments, from: start, version: document.version) {
                var inner = scope
                for (name, value) in bindings { inner.variables[name] = .success(value) }
                for function in match.functions { inner.functions[function.name] = function }
                if end == segments.count {
                    for allow in match.allows where !allow.methods.isDisjoint(with: method.grantedBy) {
                        guard let condition = allow.condition else { return true }
                        if case .bool(true) = try? condition.value(in: inner) { return true }
                    }
                }
                if allows(method, in: match.matches, segments: segments, from: end, scope: inner) { return true }
            }
        }
        return false
    }

    /// Every way `pattern` can match `segments` from `start`: where it ends and what it binds.
    static func positions(
        of pattern: ArraySlice<StorageRulesDocument.Segment>, in segments: [String], from start: Int, version: Int
    ) -> [(Int, [(String, StorageValue)])] {
        guard let first = pattern.first else { return [(start, [])] }
        let rest = pattern.dropFirst()
        switch first {
        case .literal(let literal):
            guard start < segments.count, segments[start] == literal else { return [] }
            return positions(of: rest, in: segments, from: start + 1, version: version)
        case .single(let name):
            guard start < segments.count else { return [] }
            return positions(of: rest, in: segments, from: start + 1, version: version).map { end, bindings in
                (end, [(name, StorageValue.string(segments[start]))] + bindings)
            }
        case .recursive(let name):
            // Version 1: one or more segments; version 2: zero or more.
            let fewest = version >= 2 ? 0 : 1
            guard start + fewest <= segments.count else { return [] }
            var results: [(Int, [(String, StorageValue)])] = []
            for end in (start + fewest)...segments.count {
                let bound = StorageValue.path(Array(segments[start..<end]))
                for (finish, bindings) in positions(of: rest, in: segments, from: end, version: version) {
                    results.append((finish, [(name, bound)] + bindings))
                }
            }
            return results
        }
    }

    // MARK: - Variables

    static func variables(for request: Request, path: [String]) -> [String: Result<StorageValue, StorageRuleError>] {
        var auth = StorageValue.null
        if let claims = request.authClaims, !claims.isNull {
            let uid = claims.child(ChildKey("user_id")).isNull ? claims.child(ChildKey("sub")) : claims.child(ChildKey("user_id"))
            auth = .map(["uid": value(uid), "token": value(claims)])
        }
        let incoming: StorageValue = request.incoming.map { resource($0, incoming: true) } ?? .null
        let requestValue = StorageValue.map([
            "auth": auth,
            "method": .string(request.method.rawValue),
            "path": .path(path),
            "time": .timestamp(request.time * 1_000_000),
            "resource": incoming,
            "params": .map([:]),
        ])
        return [
            "request": .success(requestValue),
            "resource": .success(request.existing.map { resource($0, incoming: false) } ?? .null),
        ]
    }

    /// An object as rules see it. The incoming one (`request.resource`) has no generation,
    /// metageneration, etag or times yet, as in Firebase.
    static func resource(_ object: StoredObject, incoming: Bool) -> StorageValue {
        var fields: [String: StorageValue] = [
            "name": .string(object.name),
            "bucket": .string(object.bucket),
            "size": .int(object.size),
            "contentType": .string(object.contentType),
            "md5Hash": .string(object.md5Hash),
            "metadata": .map(object.customMetadata.mapValues(StorageValue.string)),
        ]
        for (key, value) in [
            ("cacheControl", object.cacheControl), ("contentDisposition", object.contentDisposition),
            ("contentEncoding", object.contentEncoding), ("contentLanguage", object.contentLanguage),
        ] {
            if let value { fields[key] = .string(value) }
        }
        if !incoming {
            fields["generation"] = .int(object.generation)
            fields["metageneration"] = .int(object.metageneration)
            fields["etag"] = .string(object.etag)
            fields["timeCreated"] = .timestamp(object.timeCreated * 1_000_000)
            fields["updated"] = .timestamp(object.updated * 1_000_000)
        }
        return .map(fields)
    }

    /// A database value (token claims) as a rules value: objects whose keys are 0, 1, … are lists.
    static func value(_ node: Node) -> StorageValue {
        switch node.unprioritized {
        case .null: return .null
        case .bool(let flag): return .bool(flag)
        case .int(let number): return .int(number)
        case .double(let number): return .float(number)
        case .string(let text): return .string(text)
        case .object(let children):
            if let length = JSONWriter.arrayLength(children) {
                var items = Array(repeating: StorageValue.null, count: length)
                for (key, child) in children { items[key.arrayIndex!] = value(child) }
                return .list(items)
            }
            var entries: [String: StorageValue] = [:]
            for (key, child) in children { entries[key.string] = value(child) }
            return .map(entries)
        case .prioritized: return .null
        }
    }
}
