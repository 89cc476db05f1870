import HearthAuth
import Hummingbird

/// Firebase Auth's URL space as a Hummingbird router. Every route throws its refusals; the
/// router's ``IdentityToolkitErrors`` middleware writes them (an unknown path under the Google
/// API hosts is `NOT_FOUND`, a method a path does not take `METHOD_NOT_ALLOWED`).
extension AuthResponder {
    typealias Context = HearthRequestContext

    /// The responder for every path ``handles(_:)`` accepts.
    func responder() -> any HTTPResponder<Context> {
        let router = Router(context: Context.self)
        router.add(middleware: APIErrorMiddleware(IdentityToolkitErrors()))
        router.add(middleware: SignInClientMiddleware(proxies: proxies))

        for path in Self.jwksPaths {
            router.endpoint(RouterPath(path), .get) { _, _ in Self.json(try service.issuer.jwks()) }
        }
        for path in Self.x509Paths {
            router.endpoint(RouterPath(path), .get) { _, _ in
                JSONResponse.encoding(service.issuer.x509Certificates(), headers: [.cacheControl: "public, max-age=3600"])
            }
        }
        router.endpoint(RouterPath(Self.providersPath), .get) { _, _ in try await providers() }
        for path in Self.tokenEndpoints {
            router.endpoint(RouterPath(path), .post) { request, _ in await token(request) }
        }
        router.endpoint(RouterPath(Self.secureToken), .post) { request, _ in
            try await refresh(try await body(of: request, allowForm: true))
        }

        // The users' API. `accounts:signUp` and the rest are constant path components.
        let users: [(String, RouteHandler)] = [
            ("accounts:signUp", signUp),
            ("accounts:signInWithPassword", signInWithPassword),
            ("accounts:signInWithCustomToken", { request, _ in try await signInWithCustomToken(request) }),
            ("accounts:lookup", { request, _ in try await lookup(request) }),
            ("accounts:update", { request, _ in try await update(request) }),
            ("accounts:delete", { request, _ in try await delete(request) }),
            ("accounts:signOut", { request, _ in try await signOut(request) }),
            ("accounts:createAuthUri", { request, context in
                try await createAuthUri(
                    try await body(of: request, allowForm: false), request: request,
                    client: proxies.clientAddress(of: request, peer: context.remoteAddress))
            }),
            ("accounts:signInWithIdp", { request, _ in try await signInWithIdp(try await body(of: request, allowForm: false)) }),
            ("accounts:sendOobCode", { request, context in
                try await sendOobCode(
                    try await body(of: request, allowForm: false), request: request,
                    client: proxies.clientAddress(of: request, peer: context.remoteAddress))
            }),
            ("accounts:resetPassword", { request, _ in try await resetPassword(try await body(of: request, allowForm: false)) }),
            ("accounts:signInWithEmailLink", { request, _ in
                try await signInWithEmailLink(try await body(of: request, allowForm: false))
            }),
        ]
        for (endpoint, handler) in users {
            router.endpoint(RouterPath(Self.identityToolkit + endpoint), .post, handler)
        }
        router.endpoint(RouterPath(Self.identityToolkit + "projects"), .get) { request, _ in try await projectConfig(request) }

        // The v3 API of SDK 8 and older SDKs (`AuthResponder+IdentityToolkitV3.swift`): v1's
        // user routes under their older names, and the methods that differ.
        let usersByName = Dictionary(uniqueKeysWithValues: users)
        for (method, endpoint) in Self.relyingPartyAliases {
            guard let handler = usersByName[endpoint] else { preconditionFailure("v3's \(method) names no v1 route") }
            router.endpoint(RouterPath(Self.relyingPartyPrefix + method), .post, relyingParty(handler))
        }
        let relyingPartyMethods: [(String, HTTPRequest.Method, RouteHandler)] = [
            ("getOobConfirmationCode", .post, getOobConfirmationCode),
            ("signOutUser", .post, { request, _ in try await signOutUser(request) }),
            ("getProjectConfig", .get, { request, _ in try await projectConfig(request) }),
            ("downloadAccount", .post, asAdmin { request, _ in try await downloadAccount(try await body(of: request, allowForm: false)) }),
            ("uploadAccount", .post, asAdmin { request, _ in try await importUsers(try await body(of: request, allowForm: false)) }),
            ("getRecaptchaParam", .get, { _, _ in try phoneSignIn() }),
            ("sendVerificationCode", .post, { _, _ in try phoneSignIn() }),
            ("verifyPhoneNumber", .post, { _, _ in try phoneSignIn() }),
        ]
        for (method, httpMethod, handler) in relyingPartyMethods {
            router.endpoint(RouterPath(Self.relyingPartyPrefix + method), httpMethod, relyingParty(handler))
        }

        // The admins' API, for the project named in the path: `projects/<project>/accounts…`.
        let project = Self.identityToolkit + "projects/{project}"
        router.endpoint(RouterPath(project), .post, asAdmin { request, _ in
            // `projects/<project>:createSessionCookie` is one path component.
            guard request.uri.path.hasSuffix(":createSessionCookie") else { throw AuthError.notFound }
            return try await createSessionCookie(try await body(of: request, allowForm: false))
        })
        router.endpoint(RouterPath(project + "/accounts:batchGet"), .get, asAdmin { request, _ in try await batchGet(request) })
        let admins: [(String, @Sendable (RequestFields, Request) async throws -> Response)] = [
            ("accounts", { body, _ in try await adminCreate(body) }),
            ("accounts:batchCreate", { body, _ in try await importUsers(body) }),
            ("accounts:sendOobCode", { body, request in try await sendOobCode(body, request: request, client: nil) }),
            ("accounts:query", { body, _ in try await queryUsers(body) }),
            ("accounts:lookup", { body, _ in try await adminLookup(body) }),
            ("accounts:update", { body, _ in try await adminUpdate(body) }),
            ("accounts:delete", { body, _ in try await adminDelete(body) }),
            ("accounts:batchDelete", { body, _ in try await batchDelete(body) }),
        ]
        for (endpoint, handler) in admins {
            router.endpoint(RouterPath(project + "/" + endpoint), .post, asAdmin { request, _ in
                try await handler(try await body(of: request, allowForm: false), request)
            })
        }

        // v2: sign-in provider configurations, `projects/<project>/<kind>[/<id>]`.
        let configs = Self.identityToolkitV2 + "projects/{project}/{kind}"
        router.endpoint(RouterPath(configs), [
            .get: asAdmin { request, context in
                try await listProviderConfigs(try Self.providerKind(context.parameters.get("kind")), request: request)
            },
            .post: asAdmin { request, context in
                try await createProviderConfig(try Self.providerKind(context.parameters.get("kind")), request: request)
            },
        ])
        router.endpoint(RouterPath(configs + "/{id}"), [
            .get: asAdmin { _, context in
                try await providerConfig(try Self.providerKind(context.parameters.get("kind")), id: try context.parameters.require("id"))
            },
            .patch: asAdmin { request, context in
                try await updateProviderConfig(
                    try Self.providerKind(context.parameters.get("kind")), id: try context.parameters.require("id"), request: request)
            },
            .delete: asAdmin { _, context in
                try await deleteProviderConfig(
                    try Self.providerKind(context.parameters.get("kind")), id: try context.parameters.require("id"))
            },
        ])

        // The emulator's own endpoints, served only with --emulator.
        let emulator = Self.emulatorAccounts + "{project}"
        router.endpoint(RouterPath(emulator + "/accounts"), .delete, inEmulator(asAdmin { _, _ in try await clearAccounts() }))
        router.endpoint(RouterPath(emulator + "/oobCodes"), [
            .get: inEmulator { _, _ in try await listedActionCodes() },
            .delete: inEmulator { _, _ in try await clearListedActionCodes() },
        ])
        addEmulatorPages(to: router)
        return router.buildResponder()
    }

    /// `handler` for admins only: anyone else gets `INSUFFICIENT_PERMISSION` before the request
    /// is read.
    private func asAdmin(_ handler: @escaping RouteHandler) -> RouteHandler {
        { request, context in
            try await requireAdmin(request)
            return try await handler(request, context)
        }
    }

    /// `handler` when the server runs as Firebase's emulator; otherwise the path does not exist.
    func inEmulator(_ handler: @escaping RouteHandler) -> RouteHandler {
        let emulator = service.policy.emulator
        return { request, context in
            guard emulator else { throw AuthError.notFound }
            return try await handler(request, context)
        }
    }

}
