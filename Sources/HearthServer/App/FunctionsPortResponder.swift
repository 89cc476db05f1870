import HTTPTypes
import Hummingbird

/// The listener the server's own functions reach it on (``ServerConfiguration/functionsPort``,
/// on loopback): the whole API, where the Firebase Admin SDK's emulator credential (`Bearer
/// owner`, which a function's `firebase_admin` sends when pointed at an emulator host) stands
/// for the admin token. So functions get admin rights without a secret in their code, and
/// `owner` means nothing on any other port outside emulator mode.
struct FunctionsPortResponder: HTTPResponder {
    typealias Context = HearthRequestContext

    let responder: HearthResponder
    let adminToken: String

    func respond(to request: Request, context: Context) async throws -> Response {
        guard request.headers[.authorization] == "Bearer owner" else {
            return try await responder.respond(to: request, context: context)
        }
        var head = request.head
        head.headerFields[.authorization] = "Bearer \(adminToken)"
        return try await responder.respond(to: Request(head: head, body: request.body), context: context)
    }
}
