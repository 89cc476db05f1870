import Foundation
import HearthFiles
import Hummingbird

/// The one entry point: answers CORS preflights, sends account requests to the account
/// service, the web session to its endpoint, file requests to file storage, the server's
/// figures to admins, page requests to the web front end and everything else to the database,
/// and puts the CORS and security headers (``SecurityHeaders``) of its kind on every response.
///
/// On the files origin (the files port, or a request for the files host name) only file
/// storage is answered: no page, account or database request is served where user content is.
struct HearthResponder: HTTPResponder {
    typealias Context = HearthRequestContext

    let database: DatabaseResponder
    let longPolling: RealtimeLongPolling
    let auth: AuthResponder
    let session: WebSessionResponder
    let files: FilesResponder
    let stats: StatsResponder
    let web: WebResponder
    let filesOrigin: FilesOrigin
    let proxies: ProxyTrust
    /// True for the listener on the files port.
    var filesOnly = false

    func respond(to request: Request, context: Context) async throws -> Response {
        let path = request.uri.path
        var response: Response
        var kind = SecurityHeaders.Kind.api
        if filesOnly || filesOrigin.isFilesHost(request.head.authority) {
            if request.method == .options {
                response = CORS.preflight(request)
            } else if FilesResponder.handles(path) {
                response = await files.respond(to: request, context: context, onAppOrigin: false)
                kind = .file
            } else {
                response = FilesResponder.errorResponse(.notFound)
            }
        } else if WebSessionResponder.handles(path) {
            // Same-origin only: no CORS headers.
            response = await session.respond(to: request, context: context)
            SecurityHeaders.apply(.api, to: &response.headers)
            return response
        } else if request.method == .options {
            response = CORS.preflight(request)
        } else if AuthResponder.handles(path) {
            response = await auth.respond(to: request, context: context)
        } else if FilesResponder.handles(path) {
            if let redirect = filesRedirect(request, context: context) {
                response = redirect
            } else {
                response = await files.respond(to: request, context: context, onAppOrigin: true)
                kind = .file
            }
        } else if path == RealtimeLongPolling.path {
            response = await longPolling.respond(to: request, connection: context.channel)
            if RealtimeLongPolling.isDisconnectFrame(request) { kind = .longPollFrame }
        } else if path == StatsResponder.path {
            response = await stats.respond(to: request)
        } else if WebResponder.handles(request) {
            let origin = filesOrigin(for: request, context: context)
            response = await web.respond(to: request, context: context, filesOrigin: origin)
            kind = .page(filesOrigin: origin)
        } else {
            response = await database.respond(to: request, context: context)
        }
        CORS.decorate(&response)
        SecurityHeaders.apply(kind, to: &response.headers)
        return response
    }

    /// The files origin as this request's browser reaches it, when files have one.
    private func filesOrigin(for request: Request, context: Context) -> String? {
        filesOrigin.origin(forAuthority: request.head.authority, scheme: proxies.scheme(of: request, peer: context.remoteAddress))
    }

    /// With a files origin, a download asked for on the app's origin by a browser itself (no
    /// `Authorization`: a link, an image, a navigation) goes to the files origin instead, so a
    /// file never opens as a document of the app's origin. Requests of the SDKs, which sign
    /// theirs, are answered here as before (a redirect would drop their `Authorization`).
    private func filesRedirect(_ request: Request, context: Context) -> Response? {
        guard request.method == .get || request.method == .head, request.headers[.authorization] == nil,
            FilesResponder.parameters(of: request)["alt"] == "media", let origin = filesOrigin(for: request, context: context)
        else { return nil }
        let query = request.uri.query.map { "?\($0)" } ?? ""
        var headers = HTTPFields()
        headers[.location] = "\(origin)\(request.uri.path)\(query)"
        return Response(status: .temporaryRedirect, headers: headers)
    }
}
