import Foundation
import HearthCore
import HearthEngine
import HearthRules
import HearthStore
import Hummingbird

/// `POST /.hearth/rules/simulate`, for admins: the console's rules simulator. The body is
/// `{"operation": "read"|"set"|"update", "path": "/a/b", "query": "orderBy=\"t\"&limitToLast=10",
/// "data": …, "auth": null | {"uid": …, "provider": …, "claims": {…}}, "rules": "<draft text>"}`
/// (`query`, as a REST URL's query, for reads only; `data` for writes only; `rules` to judge a
/// draft instead of the deployed rules); the answer is `{"allowed", "reason",
/// "trace": [{"kind", "path", "expression", "line", "column", "result", "error"}]}`. Nothing
/// is written; ``DatabaseOperations/simulate(_:at:on:auth:rulesText:)`` decides.
extension DatabaseResponder {
    static let simulatePath = "/.hearth/rules/simulate"

    struct SimulationAnswer: Encodable {
        struct Step: Encodable {
            var kind: String
            var path: String
            var expression: String
            var line: Int
            var column: Int
            var result: Bool
            var error: String?
        }

        var allowed: Bool
        var reason: String?
        var trace: [Step]
    }

    func handleSimulation(_ request: Request) async throws -> Response {
        let parameters = try await admin.admit(request, methods: [.post])
        let bytes = Array(try await body(of: request).readableBytesView)
        var fields: [String: ArraySlice<UInt8>] = [:]
        do {
            for member in try JSONParser.members(ofObject: bytes) { fields[member.key] = bytes[member.value] }
        } catch {
            throw HearthError(.invalidData, "The body must be a JSON object such as {\"operation\": \"read\", \"path\": \"/\", \"auth\": null}.")
        }
        guard case .string(let pathText)? = fields["path"].flatMap({ try? JSONParser.parseDocument($0) }) else {
            throw HearthError(.invalidData, "\"path\" must be a string such as \"/users/alice\".")
        }
        let path = try Path(parsing: pathText, allowPriority: true)
        let query = try Self.simulatedQuery(fields["query"])
        let operation: DatabaseOperations.SimulatedOperation
        switch fields["operation"].flatMap({ try? JSONParser.parseDocument($0) }) {
        case .string("read")?:
            operation = .read(query)
        case .string(let write)? where query != nil && (write == "set" || write == "update"):
            throw HearthError(.invalidData, "A query applies to reads only.")
        case .string("set")?:
            guard let data = fields["data"] else { throw HearthError(.invalidData, "A set needs \"data\": the value to write.") }
            operation = .set(try JSONParser.parse(data))
        case .string("update")?:
            guard let data = fields["data"] else {
                throw HearthError(.invalidData, "An update needs \"data\": an object of child paths and values.")
            }
            guard !path.isPriorityPath else { throw HearthError.invalidPathToken }
            operation = .update(try JSONParser.parseUpdate(data))
        default:
            throw HearthError(.invalidData, "\"operation\" must be \"read\", \"set\" or \"update\".")
        }

        let auth = try Self.simulatedAuth(fields["auth"])
        var draft: String?
        if let rules = fields["rules"] {
            switch try? JSONParser.parseDocument(rules) {
            case .string(let text)?: draft = text
            case .null?: draft = nil
            default: throw HearthError(.invalidData, "\"rules\" must be the rules text as a string, or null for the deployed rules.")
            }
        }
        let database = try await operations.database(named: databaseName(for: request, parameters: parameters), creating: true)
        let simulation = try operations.simulate(operation, at: path, on: database, auth: auth, rulesText: draft)
        let answer = SimulationAnswer(
            allowed: simulation.allowed, reason: simulation.reason,
            trace: simulation.trace.map { step in
                .init(
                    kind: step.kind.rawValue, path: step.path.description, expression: step.expression,
                    line: step.position.line, column: step.position.column, result: step.result, error: step.error)
            })
        return JSONResponse.encoding(answer)
    }

    /// The query a read asks for: the body's `"query"`, written as a REST URL's query
    /// (`orderBy="timestamp"&limitToLast=10`, values percent-encoded or not), or none for a
    /// plain read (no `"query"`, null or empty). Firebase's REST errors for a bad query.
    static func simulatedQuery(_ field: ArraySlice<UInt8>?) throws -> Query? {
        guard let field else { return nil }
        let text: String
        switch try? JSONParser.parseDocument(Array(field)) {
        case .null?: return nil
        case .string(let value)?: text = value.hasPrefix("?") ? String(value.dropFirst()) : value
        default: throw HearthError(.invalidData, "\"query\" must be a REST query string such as orderBy=\"timestamp\"&limitToLast=10.")
        }
        var parameters: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let value = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : ""
            parameters[name] = value
        }
        return try QueryParameters.parse(parameters)
    }

    /// The `auth` variable the body's `"auth"` names: signed out for null (or none), else a
    /// user with `uid`, an optional `provider` and extra token `claims`.
    static func simulatedAuth(_ field: ArraySlice<UInt8>?) throws -> Node {
        guard let field else { return .null }
        let bytes = Array(field)
        let invalid = HearthError(
            .invalidData, "\"auth\" must be null (signed out) or {\"uid\": \"…\", \"provider\": \"…\", \"claims\": {…}}.")
        guard let value = try? JSONParser.parseDocument(bytes) else { throw invalid }
        if value.isNull { return .null }
        guard value.children != nil, case .string(let uid) = value.child(ChildKey("uid")), !uid.isEmpty else { throw invalid }
        var provider: String?
        switch value.child(ChildKey("provider")) {
        case .null: provider = nil
        case .string(let name): provider = name
        default: throw invalid
        }
        let claims = value.child(ChildKey("claims"))
        // Parsed data turns arrays into objects; the claims must be written as an object.
        let claimsBytes = (try? JSONParser.members(ofObject: bytes))?.last { $0.key == "claims" }.map { bytes[$0.value] }
        let startsAsObject = claimsBytes?.first.map { $0 == UInt8(ascii: "{") || $0 == UInt8(ascii: "n") } ?? true
        guard claims.isNull || (claims.children != nil && startsAsObject) else {
            throw HearthError(.invalidData, "\"claims\" must be a JSON object such as {\"admin\": true}.")
        }
        return DatabaseOperations.simulatedAuth(uid: uid, provider: provider, claims: claims)
    }
}
