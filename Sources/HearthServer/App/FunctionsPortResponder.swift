import HTTPTypes
import Hummingbird

/// The listener the server's own functions reach it on (``ServerConfiguration/functionsPort``,
/// on loopback): the whole API, where the Firebase Admin SDK's emulator credential (`Bearer
/// owner`, which a function's `firebase_admin` sends when pointed at an emulator host) stands
/// for the admin token. So functions get admin rights without a secret in their code, and
/// `owner` means nothing on any other port outside emulator mode.
///
/// Browsers are kept out: a page the operator visits could otherwise reach this port on
/// loopback and act as admin. So the port answers no CORS preflight and nothing that carries
/// an `Origin` or a `Sec-Fetch-*` header (the Admin SDKs send neither), and only requests whose
/// `Host` names this loopback port (a DNS-rebinding page names its own host).
struct FunctionsPortResponder: HTTPResponder {
    typealias Context = HearthRequestContext

    let responder: HearthResponder
    let adminToken: String
    let port: Int

    func respond(to request: Request, context: Context) async throws -> Response {
        let host = request.head.authority ?? ""
        guard request.method != .options, request.headers[.origin] == nil,
            !request.headers.contains(where: { $0.name.canonicalName.hasPrefix("sec-fetch-") }),
            host == "127.0.0.1:\(port)" || host == "localhost:\(port)"
        else {
            return Response(status: .forbidden, headers: [.contentType: "application/json; charset=utf-8"],
                            body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"error": "This port is for the server's own functions."}"#)))
        }
        guard request.headers[.authorization] == "Bearer owner" else {
            return try await responder.respond(to: request, context: context)
        }
        var head = request.head
        head.headerFields[.authorization] = "Bearer \(adminToken)"
        return try await responder.respond(to: Request(head: head, body: request.body), context: context)
    }
}
