import Hummingbird

/// The one entry point: answers CORS preflights, sends account requests to the account
/// service, file requests to file storage, the server's figures to admins, page requests to the
/// web front end and everything else to the database, and puts CORS headers on every response.
struct HearthResponder: HTTPResponder {
    typealias Context = HearthRequestContext

    let database: DatabaseResponder
    let auth: AuthResponder
    let files: FilesResponder
    let stats: StatsResponder
    let web: WebResponder

    func respond(to request: Request, context: Context) async throws -> Response {
        if request.method == .options { return CORS.preflight(request) }
        var response: Response
        if AuthResponder.handles(request.uri.path) {
            response = await auth.respond(to: request, context: context)
        } else if FilesResponder.handles(request.uri.path) {
            response = await files.respond(to: request, context: context)
        } else if request.uri.path == StatsResponder.path {
            response = stats.respond(to: request)
        } else if WebResponder.handles(request) {
            response = await web.respond(to: request, context: context)
        } else {
            response = await database.respond(to: request, context: context)
        }
        CORS.decorate(&response)
        return response
    }
}
