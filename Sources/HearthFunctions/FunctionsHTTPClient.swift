import AsyncHTTPClient
import NIOCore

extension HTTPClient.Configuration {
    /// How functions are called (events, webhooks, schedules, HTTPS and callable requests, the
    /// manifest), unlike ``HTTPClient/shared``:
    /// - no read timeout: `functions-framework` sends nothing until its handler returns, so an
    ///   idle-read limit would cut every call off at that limit whatever the function's own
    ///   timeout (up to an hour); each request's deadline bounds it instead;
    /// - redirects are not followed: a function's 3xx goes to its caller as it is, and a
    ///   function cannot make the server fetch another address for it;
    /// - answers are not decompressed: they are passed on with their `Content-Encoding`.
    public static var functions: HTTPClient.Configuration {
        HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: Timeout(connect: .seconds(10), read: nil),
            decompression: .disabled)
    }
}

extension HTTPClient {
    /// A client for calling functions (``HTTPClient/Configuration/functions``). Whoever makes it
    /// shuts it down once nothing calls functions any more.
    public static func makeForFunctions() -> HTTPClient {
        HTTPClient(eventLoopGroupProvider: .singleton, configuration: .functions)
    }
}
