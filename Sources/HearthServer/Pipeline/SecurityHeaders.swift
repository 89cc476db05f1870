import HTTPTypes
import HearthEngine

/// The security headers of every response, by kind. Every response but the owner's hosted app's
/// carries `X-Content-Type-Options: nosniff`, so no browser guesses a type the server did not send.
///
/// - Pages (the web app, the console and their files) get a Content-Security-Policy that lets
///   them load only their own scripts and styles, images and media from this origin, `blob:`
///   and the files origin, and connect only to this origin (its REST, streaming and realtime
///   endpoints) and the files origin; they refuse to be framed.
/// - User files are sandboxed (`sandbox; default-src 'none'`): even if a browser rendered one as
///   a document, it would run in an opaque origin with no script, so it could not reach the app.
/// - API answers (JSON, streams, errors) are data, never documents: sandboxed, unframeable and
///   sent without a referrer.
/// - The Auth emulator's sign-in pages (emulator mode only) get policies of their own: the
///   SDKs open the handler as a popup from any origin and frame the iframe on any origin.
enum SecurityHeaders {
    enum Kind {
        /// The web app and console; `filesOrigin` is where user files are served from when that
        /// is not this origin (`https://files.example.com`).
        case page(filesOrigin: String?)
        /// The owner's hosted app (`--hosting`): none of Hearth's headers, so a policy of
        /// Hearth's never breaks the owner's pages; the owner's `headers` configuration decides,
        /// as on Firebase Hosting.
        case hosted
        /// A stored file's content or metadata.
        case file
        /// Everything else: the database, accounts and the server's own endpoints.
        case api
        /// The long-polling SDK's disconnect frame (`/.lp?dframe=t`): framed by the app's page
        /// on any origin, running only this origin's script, which tells the server the page
        /// left.
        case longPollFrame
        /// The emulator's sign-in pages (`/emulator/auth/…`, emulator mode only): the handler,
        /// opened by an app on any origin as a popup, which must keep its `window.opener` (so no
        /// `Cross-Origin-Opener-Policy`); and (`framed`) the iframe every app page embeds, which
        /// runs Google's `gapi` script as the SDK's iframe protocol needs.
        case emulatorPage(framed: Bool)
    }

    /// The policy of pages, allowing `filesOrigin` for images, media and requests.
    static func pagePolicy(filesOrigin: String?) -> String {
        let files = filesOrigin.map { " \($0)" } ?? ""
        return [
            "default-src 'none'",
            "script-src 'self'",
            "style-src 'self'",
            "img-src 'self' blob: data:\(files)",
            "media-src 'self' blob:\(files)",
            "font-src 'self'",
            "connect-src 'self'\(files)",
            "manifest-src 'self'",
            "worker-src 'self'",
            "form-action 'self'",
            "base-uri 'none'",
            "object-src 'none'",
            "frame-src 'none'",
            "frame-ancestors 'none'",
        ].joined(separator: "; ")
    }

    /// The emulator's sign-in page: its own script and style, account photos from anywhere.
    static let emulatorHandlerPolicy = [
        "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data: https: http:", "connect-src 'self'",
        "form-action 'none'", "base-uri 'none'", "object-src 'none'", "frame-ancestors 'none'",
    ].joined(separator: "; ")
    /// The emulator's iframe: framed by apps on any origin, running its own script and Google's
    /// `gapi` (the SDKs speak to the iframe through `gapi.iframes`).
    static let emulatorIframePolicy = [
        "default-src 'none'", "script-src 'self' https://apis.google.com", "connect-src 'self' https://apis.google.com",
        "frame-src https://apis.google.com", "form-action 'none'", "base-uri 'none'", "object-src 'none'", "frame-ancestors *",
    ].joined(separator: "; ")
    static let filePolicy = "sandbox; default-src 'none'"
    static let longPollFramePolicy = "default-src 'none'; script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'"
    static let apiPolicy = "sandbox; default-src 'none'; frame-ancestors 'none'"

    // Made once: these go on every response, and appending ready fields is cheaper than
    // setting them one by one.
    private static let nosniff = HTTPField(name: .xContentTypeOptions, value: "nosniff")
    private static let apiFields: [HTTPField] = [
        nosniff,
        HTTPField(name: .contentSecurityPolicy, value: apiPolicy),
        HTTPField(name: .xFrameOptions, value: "DENY"),
        HTTPField(name: .referrerPolicy, value: "no-referrer"),
    ]
    private static let fileFields: [HTTPField] = [
        nosniff,
        HTTPField(name: .contentSecurityPolicy, value: filePolicy),
        HTTPField(name: .referrerPolicy, value: "no-referrer"),
        // Apps on other origins embed these files; say so explicitly.
        HTTPField(name: .crossOriginResourcePolicy, value: "cross-origin"),
    ]
    private static let longPollFrameFields: [HTTPField] = [
        nosniff,
        HTTPField(name: .contentSecurityPolicy, value: longPollFramePolicy),
        HTTPField(name: .referrerPolicy, value: "no-referrer"),
    ]
    private static let pageFieldsWithoutPolicy: [HTTPField] = [
        nosniff,
        HTTPField(name: .xFrameOptions, value: "DENY"),
        HTTPField(name: .referrerPolicy, value: "same-origin"),
        // Pages of other origins get no handle on the app; the app may still open sign-in popups.
        HTTPField(name: .crossOriginOpenerPolicy, value: "same-origin-allow-popups"),
        HTTPField(name: .permissionsPolicy, value: "camera=(), microphone=(), geolocation=(), payment=(), usb=()"),
    ]
    private static let emulatorHandlerFields: [HTTPField] = [
        nosniff,
        HTTPField(name: .contentSecurityPolicy, value: emulatorHandlerPolicy),
        HTTPField(name: .xFrameOptions, value: "DENY"),
        HTTPField(name: .referrerPolicy, value: "no-referrer"),
    ]
    private static let emulatorIframeFields: [HTTPField] = [
        nosniff,
        HTTPField(name: .contentSecurityPolicy, value: emulatorIframePolicy),
        HTTPField(name: .referrerPolicy, value: "no-referrer"),
    ]
    private static let pagePolicyWithoutFilesOrigin = HTTPField(name: .contentSecurityPolicy, value: pagePolicy(filesOrigin: nil))

    /// Adds the headers of `kind` to `headers`, which must not hold them yet (responders leave
    /// them to this one place).
    static func apply(_ kind: Kind, to headers: inout HTTPFields) {
        switch kind {
        case .page(let filesOrigin):
            headers.append(contentsOf: pageFieldsWithoutPolicy)
            headers.append(
                filesOrigin.map { HTTPField(name: .contentSecurityPolicy, value: pagePolicy(filesOrigin: $0)) }
                    ?? pagePolicyWithoutFilesOrigin)
        case .hosted:
            break
        case .file:
            headers.append(contentsOf: fileFields)
        case .api:
            headers.append(contentsOf: apiFields)
        case .longPollFrame:
            headers.append(contentsOf: longPollFrameFields)
        case .emulatorPage(let framed):
            headers.append(contentsOf: framed ? emulatorIframeFields : emulatorHandlerFields)
        }
    }
}

extension HTTPField.Name {
    static let xFrameOptions = Self("X-Frame-Options")!
    static let referrerPolicy = Self("Referrer-Policy")!
    static let crossOriginOpenerPolicy = Self("Cross-Origin-Opener-Policy")!
    static let permissionsPolicy = Self("Permissions-Policy")!
    /// Fetch Metadata: what a browser says of a request's origin and use (page scripts cannot set these).
    static let secFetchSite = Self("Sec-Fetch-Site")!
    static let secFetchDest = Self("Sec-Fetch-Dest")!
}
