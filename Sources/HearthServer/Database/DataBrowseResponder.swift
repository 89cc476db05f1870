import HearthCore
import HearthEngine
import HearthStore
import Hummingbird

/// The console's Data section browses big locations through these, for admins (the REST API
/// keeps Firebase's behaviour: `shallow=true` refuses a query):
/// - `GET /.hearth/data/summary?path=&ns=&cap=`: `{"children": N, "nodes": n, "more": bool}`,
///   the location's direct children and the nodes of its subtree counted up to `cap`
///   (default 20,000; `more` when there are more);
/// - `GET /.hearth/data/children?path=&ns=&startAt=|startAfter=&endAt=&limit=`: up to `limit`
///   (default 100) children in key order, bounds given as plain keys:
///   `{"children": N, "keys": [{"key": k, "value": leaf} | {"key": k, "children": n}], "more": bool}`;
/// - `GET /.hearth/data/search?path=&ns=&q=&limit=&maxNodes=`: every location under `path` whose
///   key contains `q` (ignoring case), depth first in key order, at most `limit` (default 100)
///   of them and looking at no more than `maxNodes` (default 1,000,000) nodes:
///   `{"matches": [{"path": p, "value": leaf} | {"path": p, "children": n}], "visited": n,
///   "complete": bool, "stoppedAt": "results" | "nodes" | null}`.
///
/// A thin transport over ``DatabaseOperations/summary(_:at:cap:)`` and
/// ``DatabaseOperations/childPage(_:at:startAt:startAfter:endAt:limit:)`` and
/// ``DatabaseOperations/findKeys(_:under:containing:maxResults:maxNodes:)``.
struct DataBrowseResponder: Sendable {
    static let summaryPath = "/.hearth/data/summary"
    static let childrenPath = "/.hearth/data/children"
    static let searchPath = "/.hearth/data/search"
    static let paths = [summaryPath, childrenPath, searchPath]
    static let defaultSearchResults = 100
    static let defaultSearchNodes = 1_000_000
    static let defaultCap = 20_000
    static let defaultLimit = 100

    static func handles(_ path: String) -> Bool {
        paths.contains(path)
    }

    let operations: DatabaseOperations
    let admin: AdminCredential
    let defaultDatabase: String

    func respond(to request: Request) async throws -> Response {
        do {
            let parameters = try await admin.admit(request)
            let path = try Path(parsing: parameters["path"] ?? "/")
            let name = parameters["ns"] ?? DatabaseResponder.databaseName(host: request.head.authority) ?? defaultDatabase
            let database = try await operations.database(named: name, creating: true)
            if request.uri.path == Self.summaryPath {
                let cap = try Self.number(parameters["cap"], name: "cap", default: Self.defaultCap)
                return Self.encode(try operations.summary(database, at: path, cap: cap))
            }
            if request.uri.path == Self.searchPath {
                let found = try operations.findKeys(
                    database, under: path, containing: parameters["q"] ?? "",
                    maxResults: try Self.number(parameters["limit"], name: "limit", default: Self.defaultSearchResults),
                    maxNodes: try Self.number(parameters["maxNodes"], name: "maxNodes", default: Self.defaultSearchNodes))
                return Self.encode(found)
            }
            let page = try operations.childPage(
                database, at: path, startAt: try Self.key(parameters["startAt"]), startAfter: try Self.key(parameters["startAfter"]),
                endAt: try Self.key(parameters["endAt"]),
                limit: try Self.number(parameters["limit"], name: "limit", default: Self.defaultLimit))
            return Self.encode(page)
        }
    }

    private static func number(_ text: String?, name: String, default value: Int) throws(HearthError) -> Int {
        guard let text else { return value }
        guard let number = Int(text) else { throw HearthError(.invalidQuery, "\(name) must be a whole number") }
        return number
    }

    /// A bound is a key as it is written, not JSON; an end bound may go past every key
    /// (a search's `prefix\u{F8FF}`), so only the characters no key may hold are refused.
    private static func key(_ text: String?) throws(HearthError) -> ChildKey? {
        guard let text else { return nil }
        guard !text.isEmpty, !text.contains(where: { ".$#[]/".contains($0) }) else {
            throw HearthError(.invalidQuery, "A key bound cannot be empty or contain . $ # [ ] or /")
        }
        return ChildKey(text)
    }

    private static func encode(_ summary: DatabaseOperations.DataSummary) -> Response {
        JSONResponse.make(bytes: Array(#"{"children":\#(summary.children),"more":\#(summary.more),"nodes":\#(summary.nodes)}"#.utf8))
    }

    private static func encode(_ found: Node.KeyMatches) -> Response {
        var bytes = Array(#"{"matches":["#.utf8)
        for (index, match) in found.matches.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += Array(#"{"path":"#.utf8)
            bytes += JSONWriter.bytes(.string(match.path.description), format: .compact)
            if let children = match.node.children {
                bytes += Array(#","children":\#(children.count)"#.utf8)
            } else {
                bytes += Array(#","value":"#.utf8)
                bytes += JSONWriter.bytes(match.node.unprioritized, format: .compact)
            }
            bytes.append(UInt8(ascii: "}"))
        }
        let stop = found.stoppedAt.map { "\"\($0.rawValue)\"" } ?? "null"
        bytes += Array(#"],"visited":\#(found.visited),"complete":\#(found.stoppedAt == nil),"stoppedAt":\#(stop)}"#.utf8)
        return JSONResponse.make(bytes: bytes)
    }

    private static func encode(_ page: DatabaseOperations.ChildPage) -> Response {
        var bytes = Array(#"{"children":\#(page.children),"keys":["#.utf8)
        for (index, entry) in page.entries.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += Array(#"{"key":"#.utf8)
            bytes += JSONWriter.bytes(.string(entry.key.string), format: .compact)
            switch entry {
            case .leaf(_, let value):
                bytes += Array(#","value":"#.utf8)
                bytes += JSONWriter.bytes(value, format: .compact)
            case .object(_, let children):
                bytes += Array(#","children":\#(children)"#.utf8)
            }
            bytes.append(UInt8(ascii: "}"))
        }
        bytes += Array(#"],"more":\#(page.more)}"#.utf8)
        return JSONResponse.make(bytes: bytes)
    }
}
