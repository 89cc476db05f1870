import HearthAuth
import Hummingbird

/// The pages Firebase's SDKs open on an Auth emulator for `signInWithPopup` and
/// `signInWithRedirect`, served in emulator mode only (elsewhere every `/emulator/auth/` path
/// is `NOT_FOUND`):
///
/// - `/emulator/auth/handler?apiKey=…&appName=…&authType=…&providerId=…&redirectUrl=…&eventId=…`:
///   pick an account made earlier for the provider, or make one; the page makes a fake
///   credential (the claims as JSON, ``HearthAuth/AuthService/emulatorProfile(_:)``) and hands the
///   SDK its auth event: to the opener's iframe for a popup, in `sessionStorage` for a redirect.
/// - `/emulator/auth/iframe?apiKey=…&appName=…`: the hidden iframe that passes those events to
///   the SDK through Google's `gapi.iframes`.
///
/// The pages are plain files of the web folder (`emulator/auth/`); the accounts the handler
/// offers come from `GET /emulator/auth/accounts?providerId=…`.
extension AuthResponder {
    /// The pages' own scripts and style, by name in `/emulator/auth/`.
    static let emulatorPageFiles: Set<String> = ["handler.js", "handler.css", "iframe.js"]

    func addEmulatorPages(to router: Router<Context>) {
        router.endpoint(RouterPath(Self.emulatorPages + "handler"), .get, inEmulator { request, context in
            // What Firebase's emulator needs to make a sign-in at all.
            let query = request.uri.queryParameters
            guard query["apiKey"]?.isEmpty == false, query["providerId"]?.isEmpty == false else {
                throw AuthError.invalidArgument("the handler needs the apiKey and providerId query parameters")
            }
            return try await page("handler.html", request: request, context: context)
        })
        router.endpoint(RouterPath(Self.emulatorPages + "iframe"), .get, inEmulator { request, context in
            try await page("iframe.html", request: request, context: context)
        })
        router.endpoint(RouterPath(Self.emulatorPages + "accounts"), .get, inEmulator { request, _ in
            guard let providerID = request.uri.queryParameters["providerId"].map(String.init), !providerID.isEmpty else {
                throw AuthError("MISSING_PROVIDER_ID")
            }
            let identities = try await service.emulatorIdentities(providerID: providerID)
            return Self.answer(EmulatorAccountsAnswer(accounts: identities.map {
                .init(rawId: $0.rawID, email: $0.email, displayName: $0.displayName, photoUrl: $0.photoURL)
            }))
        })
        router.endpoint(RouterPath(Self.emulatorPages + "{file}"), .get, inEmulator { request, context in
            let name = try context.parameters.require("file")
            guard Self.emulatorPageFiles.contains(name) else { throw AuthError.notFound }
            return try await page(name, request: request, context: context)
        })
    }

    /// The file `emulator/auth/<name>` of the web folder, with the emulator pages' headers.
    private func page(_ name: String, request: Request, context: Context) async throws -> Response {
        guard let pages, case .file(let file) = try await pages.entry(at: "emulator/auth/" + name) else { throw AuthError.notFound }
        context.note.update { $0.headers = .emulatorPage(framed: name.hasPrefix("iframe")) }
        return WebResponder.response(file, to: request)
    }
}
