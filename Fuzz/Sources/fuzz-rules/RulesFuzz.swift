import FuzzSupport
import HearthCore
import HearthRules

/// The database rules language: a rules document (JSON with comments, `.read`/`.write`/
/// `.validate` expressions, wildcards, `.indexOn`), or a bare expression, then evaluated for
/// reads, query reads and writes at a path of the input, by the user of the input's token
/// claims, against a small tree.
///
/// The input is NUL-separated: the document or expression, the path, the claims (JSON), the
/// data written (JSON).
@main
struct RulesFuzz {
    static func main() {
        Fuzzer.run { bytes in
            let parts = Fuzzer.sections(bytes, count: 4)
            let source = Fuzzer.text(parts[0])
            let path = (try? Path(parsing: Fuzzer.text(parts[1]), allowPriority: true)) ?? Path(keys: [ChildKey("users"), ChildKey("alice")])
            let claims = (try? JSONParser.parseDocument(parts[2])) ?? .null
            let requester = SecurityRules.Requester(
                auth: claims.isNull ? .null : SecurityRules.authVariable(claims: claims), now: 1_700_000_000_000)
            let written = try? JSONParser.parse(parts[3])
            if source.drop(while: \.isWhitespace).hasPrefix("{") || source.drop(while: \.isWhitespace).hasPrefix("/") {
                checkDocument(source, path: path, requester: requester, written: written)
            } else {
                checkExpression(source, path: path, requester: requester, written: written)
            }
        }
    }

    static func checkDocument(_ source: String, path: Path, requester: SecurityRules.Requester, written: JSONParser.Parsed?) {
        let problems = RulesDocument.problems(in: source)
        let rules: SecurityRules
        do {
            rules = try SecurityRules(parsing: source)
        } catch {
            Fuzzer.expect(!problems.isEmpty, "the document is refused (\(error)) but has no problems listed")
            return
        }
        Fuzzer.expect(problems.isEmpty, "the document compiles but has problems listed: \(problems)")
        // The strict JSON the server stores parses and compiles to the same rules.
        if let strict = try? rules.document.strictJSON() {
            Fuzzer.expect((try? SecurityRules(parsing: strict)) != nil, "the strict JSON of valid rules does not compile: \(strict)")
        }
        _ = rules.document.nodes(along: path)
        _ = rules.document.node(at: path)
        for order in [Query.Order.value, .key, .child(Path(keys: [ChildKey("n")]))] {
            _ = rules.document.declaresIndex(at: path, for: order)
        }
        let root = Fixture.state.root
        _ = rules.read(path, by: requester, root: root)
        for query in Fixture.queries { _ = rules.read(path, by: requester, root: root, query: RuleQuery(query)) }
        guard let written else { return }
        for write in [Write.set(path, written), .update(path.parent ?? .root, [(Path(keys: [path.last ?? ChildKey("x")]), written)])] {
            guard let (next, resolved) = try? Fixture.state.applying(write, now: requester.now) else { continue }
            _ = try? rules.authorizeWrite(changing: resolved.changedPaths, by: requester, before: root, after: next.root)
        }
    }

    static func checkExpression(_ source: String, path: Path, requester: SecurityRules.Requester, written: JSONParser.Parsed?) {
        guard let expression = try? RuleExpression.parse(source, at: SourcePosition(line: 1, column: 1)) else { return }
        _ = expression.description
        _ = expression.identifiers
        let after = written.flatMap { try? Fixture.state.applying(.set(path, $0), now: requester.now).0.root }
        var wildcards: [String: String] = [:]
        for (index, key) in path.keys.enumerated() { wildcards["$w\(index)"] = key.string }
        for query in [nil] + Fixture.queries {
            let context = RuleContext(
                auth: requester.auth, now: requester.now, root: Fixture.state.root, newRoot: after, location: path,
                wildcards: wildcards, query: RuleQuery(query))
            _ = try? expression.value(in: context)
        }
    }
}

/// The data the rules see.
enum Fixture {
    static let state: DatabaseState = {
        let data = #"""
            {"users": {"alice": {"name": "Alice", "age": 31, "admin": true, "tags": ["a", "b"]},
                       "bob": {"name": "Bob", "age": 17, ".priority": 2}},
             "rooms": {"r1": {"members": {"alice": true}, "title": "Hello", "created": 1700000000000}},
             "scores": {"a": {"n": 1}, "b": {"n": 2.5}, "c": {"n": "z"}}, "flag": false, "count": 3}
            """#
        return DatabaseState(root: try! JSONParser.parse(Array(data.utf8)).node)
    }()

    static let queries: [Query?] = [
        Query(order: .key, limit: .first(10)),
        Query(order: .child(Path(keys: [ChildKey("age")])), start: Query.Bound(value: .int(18))),
        Query.equal(order: .value, value: .string("Alice"), limit: .last(1)),
    ]
}
