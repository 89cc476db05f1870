import FuzzSupport
import HTTPTypes
import HearthCore
import HearthRules
import Hummingbird

@testable import HearthEngine
@testable import HearthServer

/// A REST request's URL (`/scores.json?orderBy="n"&startAt=2&limitToFirst=3`): its path, its
/// options and its query, run on a small tree with and without an index. A query's answer is in
/// order, within its bounds and its limit, and the same either way.
@main
struct QueryFuzz {
    static func main() {
        Fuzzer.run { bytes in
            let head = HTTPRequest(method: .get, scheme: "http", authority: "localhost", path: Fuzzer.text(bytes))
            let request = Request(head: head, body: RequestBody(buffer: ByteBuffer()))
            guard let rest = try? RESTRequest(request), let query = try? QueryParameters.parse(rest.parameters) else { return }
            _ = RuleQuery(query)
            check(query, at: rest.path)
            check(query, at: Path(keys: [ChildKey("scores")]))
        }
    }

    static let state: DatabaseState = {
        let data = #"""
            {"scores": {"a": {"n": 1, "m": "x"}, "b": {"n": 2.5, ".priority": 3}, "c": {"n": "z", "m": {"k": 1}},
                        "d": {"n": true}, "1": {"m": 1}, "-2": 7, "e": {"n": {"deep": 1}}, "f": {"n": 1},
                        "g": {"n": false, ".priority": "p"}, "h": "text", "i": {"n": -0.5}}}
            """#
        return DatabaseState(root: try! JSONParser.parse(Array(data.utf8)).node)
    }()

    static func check(_ query: Query, at path: Path) {
        let indexed = state.addingIndex(at: path, order: query.order)
        let scanned = state.run(query, at: path)
        let fromIndex = indexed.run(query, at: path)
        Fuzzer.expect(
            scanned.map(\.key) == fromIndex.map(\.key), "\(query) at \(path): \(scanned.map(\.key)) by scan, \(fromIndex.map(\.key)) by index")
        switch query.limit {
        case .first(let count)?, .last(let count)?:
            Fuzzer.expect(scanned.count <= count, "\(query) kept \(scanned.count) children")
        case nil: break
        }
        // In the query's order: by value, then by key.
        for (left, right) in zip(scanned, scanned.dropFirst()) {
            let order = SortValue.compare(query.sortValue(of: left.value), query.sortValue(of: right.value))
            Fuzzer.expect(
                order < 0 || (order == 0 && ChildKey.compare(left.key, right.key) < 0),
                "\(query) answered \(left.key) before \(right.key)")
        }
        _ = state.queryValue(query, at: path)
    }
}
