import AsyncHTTPClient
import Foundation
import HTTPTypes
import HearthAuth
import HearthCore
import HearthEngine
import HearthFunctions
import Hummingbird
import NIOCore
import NIOHTTP1

/// Callable and HTTPS functions on the server's own port, at the path Firebase's emulator
/// serves them at (`/<project>/<region>/<name>[/<path>]`), so the JS SDK's
/// `connectFunctionsEmulator(functions, host, port)` + `httpsCallable` (and SDK 8's
/// `functions().useEmulator`) reach them unchanged.
///
/// A callable's caller is checked here first: a bearer token that is not a valid ID token of
/// this server (or an admin credential) is refused with the callable protocol's
/// `UNAUTHENTICATED`, before the function sees anything. Then the request goes to the
/// function's process, bounded (a body of at most ``maxRequestBytes``, an answer of at most
/// ``maxResponseBytes``, the function's timeout). App Check tokens are not passed on: a function
/// would try to verify them against Google. The answer goes back as the function gave it: a
/// redirect is the caller's to follow (the client follows none, so a function's redirect
/// cannot make the server fetch another address), a compressed body stays compressed.
struct FunctionsResponder: HTTPResponder {
    typealias Context = HearthRequestContext

    let functions: FunctionsService
    let projectID: String
    let admin: AdminCredential
    let issuer: TokenIssuer
    /// Refuses the tokens of accounts disabled, deleted or signed out everywhere.
    var gate: AccountGate? = nil
    /// The functions' client (``AsyncHTTPClient/HTTPClient/Configuration/functions``).
    let client: HTTPClient
    /// The server's budget for buffered bodies, shared with REST writes: a call's request and
    /// answer are counted against it while this responder holds them.
    let bodyBudget: ByteBudget
    let clock: @Sendable () -> Int64

    /// Firebase's limit on a callable request.
    static let maxRequestBytes = 10 << 20
    static let maxResponseBytes = 32 << 20
    /// Headers not passed on either way (hop-by-hop, or the server's own).
    static let notForwarded: Set<String> = [
        "host", "connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-authorization",
        "proxy-authenticate", "content-length", "x-firebase-appcheck",
    ]

    /// The function a path names, and the rest of the path for it (`/` at least).
    func target(of path: String) -> (function: HTTPFunction, rest: String)? {
        let parts = path.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count >= 4, parts[0].isEmpty, parts[1] == projectID,
            let function = functions.httpFunctions[String(parts[3].prefix { $0 != "/" })], function.region == parts[2]
        else { return nil }
        let name = parts[3].prefix { $0 != "/" }
        let rest = parts[3].dropFirst(name.count)
        return (function, rest.isEmpty ? "/" : String(rest))
    }

    func respond(to request: Request, context: Context) async throws -> Response {
        try await respond(to: request, context: context, rewrite: false)
    }

    /// `rewrite`: the call comes through a Hosting rewrite, where Firebase passes the
    /// function's own CORS headers back (its preflight too reached the function) and only the
    /// `__session` cookie on to it.
    func respond(to request: Request, context: Context, rewrite: Bool) async throws -> Response {
        guard let (function, rest) = target(of: request.uri.path) else {
            return Self.error(.notFound, "NOT_FOUND", "No such function.")
        }
        // Functions run with the Admin SDK in emulator mode, whose `verify_id_token` does not
        // check signatures: so Hearth checks a bearer ID token before any function sees it. A
        // callable refuses a bad one; an HTTPS function gets the request without it (its own
        // bearer schemes, which are not JWTs, pass untouched).
        var dropAuthorization = false
        if let authorization = request.headers[.authorization], function.isCallable || Self.looksLikeJWT(authorization) {
            var valid = authorization.hasPrefix("Bearer ")
            if valid {
                do {
                    _ = try await RequestAuth.resolve(
                        credential: String(authorization.dropFirst("Bearer ".count)), admin: admin, issuer: issuer, gate: gate, now: clock())
                } catch {
                    valid = false
                }
            }
            if !valid {
                if function.isCallable { return Self.error(.unauthorized, "UNAUTHENTICATED", "Unauthenticated") }
                dropAuthorization = true
            }
        }
        if let length = request.headers[.contentLength].flatMap(Int.init), length > Self.maxRequestBytes {
            return Self.tooLarge
        }
        var reserved = 0
        defer { bodyBudget.release(reserved) }
        var body = ByteBuffer()
        do {
            for try await chunk in request.body {
                guard body.readableBytes + chunk.readableBytes <= Self.maxRequestBytes else { return Self.tooLarge }
                guard bodyBudget.reserve(chunk.readableBytes) else { return Self.busy }
                reserved += chunk.readableBytes
                var chunk = chunk
                body.writeBuffer(&chunk)
            }
        }
        // The callable protocol's request is a POST of a JSON object with `data`: anything else
        // is refused as Firebase refuses it, without waking the function.
        if function.isCallable, !Self.isCallableRequest(request, body: body) {
            return Self.error(.badRequest, "INVALID_ARGUMENT", "Bad Request")
        }
        var forwarded = HTTPClientRequest(url: function.url.dropLast() + rest + (request.uri.query.map { "?\($0)" } ?? ""))
        forwarded.method = HTTPMethod(rawValue: request.method.rawValue)
        for field in request.headers where !Self.notForwarded.contains(field.name.canonicalName) {
            if dropAuthorization, field.name == .authorization { continue }
            if rewrite, field.name == .cookie {
                if let session = Self.sessionCookie(in: field.value) { forwarded.headers.add(name: "Cookie", value: session) }
                continue
            }
            forwarded.headers.add(name: field.name.rawName, value: field.value)
        }
        forwarded.body = .bytes(body)
        body = ByteBuffer()
        do {
            let answer = try await client.execute(forwarded, timeout: TimeAmount(function.timeout))
            var bytes = ByteBuffer()
            for try await chunk in answer.body {
                guard bytes.readableBytes + chunk.readableBytes <= Self.maxResponseBytes else { throw NIOTooManyBytesError(maxBytes: Self.maxResponseBytes) }
                guard bodyBudget.reserve(chunk.readableBytes) else { return Self.busy }
                reserved += chunk.readableBytes
                var chunk = chunk
                bytes.writeBuffer(&chunk)
            }
            var headers = HTTPFields()
            for (name, value) in answer.headers {
                let lower = name.lowercased()
                // CORS is the server's (the preflight was answered before the function), but
                // through a rewrite the function's own.
                guard !Self.notForwarded.contains(lower), rewrite || !lower.hasPrefix("access-control-"),
                    let fieldName = HTTPField.Name(name)
                else { continue }
                headers.append(HTTPField(name: fieldName, value: value))
            }
            // A `HEAD` answer's length is the function's, not that of the empty body.
            if request.method == .head, let length = answer.headers.first(name: "content-length"), Int(length) != nil {
                headers[.contentLength] = length
            }
            return Response(status: .init(code: Int(answer.status.code)), headers: headers, body: ResponseBody(byteBuffer: bytes))
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            return Self.error(.gatewayTimeout, "DEADLINE_EXCEEDED", "The function did not answer within \(function.timeout).")
        } catch let error as NIOTooManyBytesError {
            _ = error
            return Self.error(.badGateway, "INTERNAL", "The function's answer is larger than \(Self.maxResponseBytes) bytes.")
        } catch {
            return Self.error(.serviceUnavailable, "UNAVAILABLE", "The function is not running; try again.")
        }
    }

    /// The `__session` pairs of a `Cookie` header, the only cookie Firebase Hosting passes to a
    /// function; nil when there is none.
    static func sessionCookie(in header: String) -> String? {
        let kept = header.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0.hasPrefix("__session=") }
        return kept.isEmpty ? nil : kept.joined(separator: "; ")
    }

    static var tooLarge: Response {
        error(.contentTooLarge, "INVALID_ARGUMENT", "The request is larger than \(maxRequestBytes) bytes.")
    }

    /// The server holds as many buffered bodies as it may: Firebase's answer to an overloaded
    /// function, which the SDKs retry as `unavailable`.
    static var busy: Response {
        error(.serviceUnavailable, "UNAVAILABLE", "The server is busy with other large requests. Try again.")
    }

    /// `Bearer <a.b.c>`: a JWT (an ID token, forged or not), as opposed to a function's own key.
    static func looksLikeJWT(_ authorization: String) -> Bool {
        guard authorization.hasPrefix("Bearer ") else { return false }
        return authorization.dropFirst("Bearer ".count).split(separator: ".", omittingEmptySubsequences: false).count == 3
    }

    static func isCallableRequest(_ request: Request, body: ByteBuffer) -> Bool {
        guard request.method == .post,
            let type = request.headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased(),
            type == "application/json",
            let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView), options: [.fragmentsAllowed]) as? [String: Any]
        else { return false }
        return object.keys.contains("data")
    }

    /// The callable protocol's error answer (`{"error": {"message", "status"}}`), which SDKs
    /// read for HTTPS functions too.
    static func error(_ status: HTTPResponse.Status, _ code: String, _ message: String) -> Response {
        let quoted = String(decoding: JSONWriter.bytes(.string(message)), as: UTF8.self)
        let body = #"{"error":{"message":\#(quoted),"status":"\#(code)"}}"#
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }
}
