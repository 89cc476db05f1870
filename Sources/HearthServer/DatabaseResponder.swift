import HearthCore
import HearthStore
import Hummingbird
import Logging

/// Answers the Firebase Realtime Database REST API: `GET`, `PUT`, `POST`, `PATCH` and `DELETE`
/// on `/<path>.json`, with Firebase's bodies, status codes and error texts.
struct DatabaseResponder: HTTPResponder {
    typealias Context = BasicRequestContext

    let folder: DataFolder
    let configuration: ServerConfiguration

    func respond(to request: Request, context: Context) async throws -> Response {
        do {
            guard let rest = try RESTRequest(request) else {
                return HearthError(.notFound, "Not found.").response()
            }
            let database = try folder.database(named: rest.parameters["ns"] ?? configuration.defaultDatabase)
            return try await handle(rest, request: request, database: database)
        } catch let mismatch as ETagMismatch {
            return mismatch.response()
        } catch let error as HearthError {
            return error.response()
        } catch {
            context.logger.error("request failed", metadata: ["error": "\(error)"])
            return HearthError(.internalError, "Internal server error.").response()
        }
    }

    private func handle(_ rest: RESTRequest, request: Request, database: Database) async throws -> Response {
        switch rest.method {
        case .get:
            let conditions = try ETagConditions(request, method: rest.method)
            var value: Node
            if let query = try QueryParameters.parse(rest.parameters) {
                let selected = database.run(query, at: rest.path)
                value = selected.isEmpty ? .null : .object(Children(entries: selected.map { ($0.key, $0.value) }))
            } else {
                value = database.value(at: rest.path)
            }
            if rest.parameters["shallow"] == "true" { value = value.shallow }
            var headers = HTTPFields()
            if conditions.wantsETag {
                let etag = ETagConditions.etag(of: value)
                headers[.eTag] = etag
                if conditions.ifNoneMatch == etag { return Response(status: .notModified, headers: headers) }
            }
            return rest.silent
                ? Response(status: .noContent, headers: headers)
                : JSONResponse.make(bytes: JSONWriter.bytes(value, format: rest.format), headers: headers)

        case .put:
            let conditions = try ETagConditions(request, method: rest.method)
            let parsed = try JSONParser.parse(try await body(of: request).readableBytesView)
            let committed = try await database.write(.set(rest.path, parsed), precondition: conditions.precondition(at: rest.path))
            let headers = conditions.headers(after: committed, at: rest.path, in: database)
            guard !rest.silent else { return Response(status: .noContent, headers: headers) }
            guard case .set(_, let written) = committed.write else { return JSONResponse.silent() }
            return JSONResponse.make(bytes: JSONWriter.bytes(written, format: rest.format), headers: headers)

        case .post:
            guard !rest.path.isPriorityPath else { throw HearthError.invalidPathToken }
            let parsed = try JSONParser.parse(try await body(of: request).readableBytesView)
            let committed = try await database.push(at: rest.path, value: parsed)
            guard !rest.silent else { return JSONResponse.silent() }
            let name = Node.object([(ChildKey("name"), .string(committed.pushID ?? ""))])
            return JSONResponse.make(node: name, format: rest.format)

        case .patch:
            _ = try ETagConditions(request, method: rest.method)
            guard !rest.path.isPriorityPath else { throw HearthError.invalidPathToken }
            let entries = try JSONParser.parseUpdate(try await body(of: request).readableBytesView)
            let committed = try await database.write(.update(rest.path, entries))
            guard !rest.silent else { return JSONResponse.silent() }
            guard case .update(_, let written) = committed.write else { return JSONResponse.silent() }
            return JSONResponse.make(bytes: Self.render(written, format: rest.format))

        case .delete:
            let conditions = try ETagConditions(request, method: rest.method)
            let committed = try await database.write(.set(rest.path, .null), precondition: conditions.precondition(at: rest.path))
            let headers = conditions.headers(after: committed, at: rest.path, in: database)
            return rest.silent
                ? Response(status: .noContent, headers: headers)
                : JSONResponse.make(bytes: JSONWriter.bytes(.null, format: rest.format), headers: headers)
        }
    }

    /// Reads the whole body, refusing more than the write limit.
    private func body(of request: Request) async throws -> ByteBuffer {
        let limit = configuration.maxWriteBytes
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw HearthError.writeTooBig
        }
        do {
            return try await request.body.collect(upTo: limit)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            // collect(upTo:) throws NIOTooManyBytesError, which reports itself as 413.
            throw HearthError.writeTooBig
        }
    }

    /// An update's entries as the object the client sent (keys are relative paths).
    static func render(_ entries: [ResolvedWrite.UpdateEntry], format: JSONWriter.Format) -> [UInt8] {
        // Paths cannot be Node keys, so the object is assembled from rendered values.
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        for (offset, entry) in entries.enumerated() {
            if offset > 0 { bytes.append(UInt8(ascii: ",")) }
            if format.pretty { bytes += Array("\n  ".utf8) }
            bytes += JSONWriter.bytes(.string(entry.path.keys.map(\.string).joined(separator: "/")))
            bytes += format.pretty ? Array(" : ".utf8) : [UInt8(ascii: ":")]
            var value = JSONWriter.bytes(entry.value, format: format)
            if format.pretty {
                // Nested lines sit one level in; JSON text never holds a raw newline in a string.
                value = value.flatMap { $0 == 0x0A ? [0x0A, 0x20, 0x20] : [$0] }
            }
            bytes += value
        }
        if format.pretty && !entries.isEmpty { bytes.append(0x0A) }
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }
}
