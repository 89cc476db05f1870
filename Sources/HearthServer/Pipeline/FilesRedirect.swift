import HearthEngine
import Hummingbird

/// Where user files are served when they have an origin of their own (``FilesOrigin``): the
/// origin a request's browser reaches them at, and the redirect of a browser's own download
/// from the app's origin to it.
struct FilesRedirect: Sendable {
    typealias Context = HearthRequestContext

    let filesOrigin: FilesOrigin
    let proxies: ProxyTrust

    /// The files origin as this request's browser reaches it, when files have one.
    func filesOrigin(for request: Request, context: Context) -> String? {
        filesOrigin.origin(forAuthority: request.head.authority, scheme: proxies.scheme(of: request, peer: context.remoteAddress))
    }

    /// With a files origin, a download asked for on the app's origin by a browser itself (no
    /// `Authorization`: a link, an image, a navigation) goes to the files origin instead, so a
    /// file never opens as a document of the app's origin. Requests of the SDKs, which sign
    /// theirs, are answered here as before (a redirect would drop their `Authorization`).
    func response(to request: Request, context: Context) -> Response? {
        guard request.method == .get || request.method == .head, request.headers[.authorization] == nil,
            FilesResponder.parameters(of: request)["alt"] == "media", let origin = filesOrigin(for: request, context: context)
        else { return nil }
        let query = request.uri.query.map { "?\($0)" } ?? ""
        var headers = HTTPFields()
        headers[.location] = "\(origin)\(request.uri.path)\(query)"
        return Response(status: .temporaryRedirect, headers: headers)
    }
}
