import HearthAuth
import HearthCore
import HearthEngine
import HearthRules
import HearthStore
import Hummingbird
import Logging

/// Answers the Firebase Realtime Database REST API: `GET`, `PUT`, `POST`, `PATCH` and `DELETE`
/// on `/<path>.json`, with Firebase's bodies, status codes and error texts. A thin encoder over
/// ``DatabaseOperations``: it reads the request, calls the operation, and writes the answer;
/// errors are thrown, and reach the wire through ``RealtimeDatabaseErrors``.
struct DatabaseResponder: Sendable {
    typealias Context = HearthRequestContext

    let operations: DatabaseOperations
    let configuration: ServerConfiguration
    let admin: AdminCredential
    let issuer: TokenIssuer
    /// Refuses the tokens of accounts disabled, deleted or signed out everywhere.
    var gate: AccountGate?
    /// What the bodies of non-admin writes may hold at once.
    var bodyBudget = ByteBudget(limit: ServerConfiguration.defaultMaxBufferedBodyBytes)

    var hub: ListenerHub { operations.hub }
    var rules: RulesRegistry { operations.rules }

    /// The answer to a REST request; failures are thrown, and written by the namespace's
    /// ``RealtimeDatabaseErrors``.
    func respond(to request: Request, context: Context) async throws -> Response {
        let path = request.uri.path
        if path == "/.settings/rules.json" {
            return try await handleRulesSettings(request)
        }
        if path == Self.simulatePath {
            return try await handleSimulation(request)
        }
        guard let rest = try RESTRequest(request, path: path) else {
            throw HearthError(.notFound, "Not found.")
        }
        let auth = try await RequestAuth.resolve(
            request, parameters: rest.parameters, admin: admin, issuer: issuer, gate: gate, now: configuration.clock())
        // Only an admin makes a new database by naming it.
        let database = try await operations.database(
            named: databaseName(for: request, parameters: rest.parameters), creating: auth.isAdmin)
        if Self.wantsStream(request) {
            return try stream(rest, database: database, auth: auth, connection: context.channel)
        }
        return try await handle(rest, request: request, database: database, auth: auth)
    }

    private func handle(_ rest: RESTRequest, request: Request, database: Database, auth: RequestAuth) async throws -> Response {
        switch rest.method {
        case .get:
            let conditions = try ETagConditions(request, method: rest.method)
            let query = try QueryParameters.parse(rest.parameters)
            let shallow = rest.parameters["shallow"] == "true"
            let format = rest.format
            // A plain query answer may come from, and go to, the cache of recent answers.
            if let query, !conditions.wantsETag, !rest.silent, rest.parameters["callback"] == nil, rest.parameters["download"] == nil {
                let key = QueryResultCache.key(database: database.name, path: rest.path, parameters: rest.parameters)
                let bytes = try operations.readEncoded(database, at: rest.path, query: query, auth: auth, cacheKey: key) { value in
                    JSONWriter.bytes(shallow ? value.shallow : value, format: format)
                }
                return JSONResponse.make(bytes: bytes)
            }
            var value = try operations.read(database, at: rest.path, query: query, auth: auth)
            if shallow { value = value.shallow }
            var headers = HTTPFields()
            if conditions.wantsETag {
                let etag = ETagConditions.etag(of: value)
                headers[.eTag] = etag
                if conditions.ifNoneMatch == etag { return Response(status: .notModified, headers: headers) }
            }
            if rest.silent { return Response(status: .noContent, headers: headers) }
            if let download = rest.parameters["download"] {
                headers[.contentDisposition] = "attachment; filename=\"\(download)\""
            }
            if let callback = rest.parameters["callback"] {
                // JSONP: the value handed to a named function.
                var bytes = Array("\(callback)(".utf8)
                bytes += JSONWriter.bytes(value, format: format)
                bytes += Array(");".utf8)
                headers[.contentType] = "application/javascript; charset=utf-8"
                return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
            }
            return JSONResponse.make(bytes: JSONWriter.bytes(value, format: format), headers: headers)

        case .put:
            let conditions = try ETagConditions(request, method: rest.method)
            try operations.refuseEarly(.set, at: rest.path, on: database, auth: auth)
            let parsed = try await withBody(of: request, auth: auth) { try JSONParser.parse($0.readableBytesView) }
            let committed = try await operations.set(
                database, at: rest.path, to: parsed, auth: auth, condition: conditions.condition)
            guard case .set(_, var written) = committed.write else { return JSONResponse.silent() }
            if parsed.hasServerValues && !operations.mayRead([rest.path], in: database, auth: auth) {
                // An increment resolved from data the writer may not read: it gets back what it sent.
                written = parsed.node
            }
            let headers = conditions.headers(for: written)
            guard !rest.silent else { return Response(status: .noContent, headers: headers) }
            return JSONResponse.make(bytes: JSONWriter.bytes(written, format: rest.format), headers: headers)

        case .post:
            guard !rest.path.isPriorityPath else { throw HearthError.invalidPathToken }
            try operations.refuseEarly(.push, at: rest.path, on: database, auth: auth)
            let parsed = try await withBody(of: request, auth: auth) { try JSONParser.parse($0.readableBytesView) }
            let committed = try await operations.push(database, at: rest.path, value: parsed, auth: auth)
            guard !rest.silent else { return JSONResponse.silent() }
            return JSONResponse.make(bytes: Self.nameObject(committed.pushID ?? "", format: rest.format))

        case .patch:
            _ = try ETagConditions(request, method: rest.method)
            guard !rest.path.isPriorityPath else { throw HearthError.invalidPathToken }
            try operations.refuseEarly(.update, at: rest.path, on: database, auth: auth)
            let entries = try await withBody(of: request, auth: auth) { try JSONParser.parseUpdate($0.readableBytesView) }
            let committed = try await operations.update(database, at: rest.path, entries: entries, auth: auth)
            guard !rest.silent else { return JSONResponse.silent() }
            guard case .update(_, var written) = committed.write else { return JSONResponse.silent() }
            if entries.contains(where: \.value.hasServerValues)
                && !operations.mayRead(entries.map { rest.path.appending($0.path) }, in: database, auth: auth)
            {
                written = entries.map { ResolvedWrite.UpdateEntry(path: $0.path, value: $0.value.node) }
            }
            return JSONResponse.make(bytes: JSONWriter.updateObject(written, format: rest.format))

        case .delete:
            let conditions = try ETagConditions(request, method: rest.method)
            _ = try await operations.set(
                database, at: rest.path, to: JSONParser.Parsed(node: .null), auth: auth, condition: conditions.condition)
            let headers = conditions.headers(for: .null)
            return rest.silent
                ? Response(status: .noContent, headers: headers)
                : JSONResponse.make(bytes: JSONWriter.bytes(.null, format: rest.format), headers: headers)
        }
    }

    /// The database a request addresses: `ns=`, else the first label of a host name such as
    /// `mydb.firebaseio.com` or `mydb.localhost`, else the server's default.
    func databaseName(for request: Request, parameters: [String: String]) -> String {
        if let name = parameters["ns"] { return name }
        return Self.databaseName(host: request.head.authority) ?? configuration.defaultDatabase
    }

    /// The first label of a host name (`mydb` of `mydb.firebaseio.com:443`, lowercased); nil for
    /// an IP address or a name of one label such as `localhost`.
    static func databaseName(host authority: String?) -> String? {
        guard let authority else { return nil }
        // Read as bytes, borrowed: this runs on every request, and Character properties are slow.
        if let name = authority.utf8.withContiguousStorageIfAvailable({ databaseName(host: $0) }) { return name }
        return databaseName(host: authority.utf8[...])
    }

    private static func databaseName<Bytes: BidirectionalCollection<UInt8>>(host authority: Bytes) -> String? {
        guard authority.first != UInt8(ascii: "[")  // IPv6
        else { return nil }
        let host = authority.lastIndex(of: UInt8(ascii: ":")).map { authority[..<$0] } ?? authority[...]
        guard let dot = host.firstIndex(of: UInt8(ascii: ".")), dot != host.startIndex,
            host[host.index(after: dot)...].contains(where: { $0 != UInt8(ascii: ".") }),
            !host.allSatisfy({ $0 == UInt8(ascii: ".") || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) })  // IPv4
        else { return nil }
        return String(decoding: host[..<dot], as: UTF8.self).lowercased()
    }

    /// `GET` and `PUT /.settings/rules.json`: the database's rules document, for admins only.
    private func handleRulesSettings(_ request: Request) async throws -> Response {
        var parameters: [String: String] = [:]
        for (key, value) in request.uri.queryParameters { parameters[String(key)] = String(value) }
        guard await admin.isAdmin(request, parameters: parameters) else {
            throw HearthError.permissionDeniedByRules
        }
        let database = try await operations.database(named: databaseName(for: request, parameters: parameters), creating: true)
        switch request.method {
        case .get:
            return JSONResponse.make(bytes: Array(try operations.rulesText(of: database, strict: parameters["format"] == "strict").utf8))
        case .put:
            let body = try await self.body(of: request)
            try await operations.deployRules(String(decoding: body.readableBytesView, as: UTF8.self), to: database)
            return JSONResponse.make(bytes: Array(#"{"status":"ok"}"#.utf8))
        default:
            throw HearthError(.invalidData, "Invalid method for /.settings/rules: \(request.method.rawValue).")
        }
    }

    /// Reads a write's body and hands it to `use` (which parses it). A non-admin's body is
    /// counted against ``bodyBudget`` while it is read and parsed: past the budget the request
    /// is refused with 503 at once, so concurrent large bodies hold bounded memory.
    func withBody<T>(of request: Request, auth: RequestAuth, _ use: (ByteBuffer) throws -> T) async throws -> T {
        guard !auth.isAdmin else { return try use(try await body(of: request)) }
        let limit = configuration.maxWriteBytes
        if let length = request.headers.value(of: .contentLength).flatMap(Int.init), length > limit {
            throw HearthError.writeTooBig
        }
        var reserved = 0
        defer { bodyBudget.release(reserved) }
        var collected = ByteBuffer()
        for try await chunk in request.body {
            guard collected.readableBytes + chunk.readableBytes <= limit else { throw HearthError.writeTooBig }
            // The parsed tree costs about as much again as the text.
            guard bodyBudget.reserve(2 * chunk.readableBytes) else { throw Self.busy }
            reserved += 2 * chunk.readableBytes
            var chunk = chunk
            collected.writeBuffer(&chunk)
        }
        return try use(collected)
    }

    /// `{"name":"<push ID>"}`, the answer to a `POST`: written directly when compact (a push
    /// ID's characters need no escaping), as ``HearthCore/JSONWriter`` writes it.
    static func nameObject(_ pushID: String, format: JSONWriter.Format) -> [UInt8] {
        let plain = pushID.utf8.allSatisfy { $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
        guard !format.pretty, plain else {
            return JSONWriter.bytes(Node.object([(ChildKey("name"), .string(pushID))]), format: format)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(pushID.utf8.count + 12)
        bytes.append(contentsOf: #"{"name":""#.utf8)
        bytes.append(contentsOf: pushID.utf8)
        bytes.append(contentsOf: #""}"#.utf8)
        return bytes
    }

    /// Firebase's 401 for a refusal by the rules, as ``HearthCore/HearthError/response()`` writes it, made once.
    static func permissionDenied() -> Response {
        JSONResponse.make(status: HearthError.permissionDeniedByRules.code.httpStatus, buffer: permissionDeniedBody)
    }

    private static let permissionDeniedBody: ByteBuffer = {
        let body = Node.object([(ChildKey("error"), .string(HearthError.permissionDeniedByRules.message))])
        var bytes = JSONWriter.bytes(body, format: .init(pretty: true))
        bytes.append(0x0A)
        return ByteBuffer(bytes: bytes)
    }()

    /// The answer while the budget for request bodies is spent.
    static let busy = HearthError(.unavailable, "The server is busy with other large writes. Try again.")

    /// Reads the whole body, refusing more than the write limit.
    func body(of request: Request) async throws -> ByteBuffer {
        let limit = configuration.maxWriteBytes
        if let length = request.headers.value(of: .contentLength).flatMap(Int.init), length > limit {
            throw HearthError.writeTooBig
        }
        do {
            return try await request.body.collect(upTo: limit)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            // collect(upTo:) throws NIOTooManyBytesError, which reports itself as 413.
            throw HearthError.writeTooBig
        }
    }
}
