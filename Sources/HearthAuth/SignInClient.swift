/// Who is signing in, as a blocking function is told (`ip_address`, `user_agent`, `locale`).
/// The HTTP layer binds ``current`` for each request to the account service, so the service's
/// methods need no extra arguments for what only blocking functions read.
public struct SignInClient: Sendable, Equatable {
    /// The client's address, as the server's proxy rules see it.
    public var ipAddress: String
    public var userAgent: String
    /// The locale the app asked for (`X-Firebase-Locale`), `en` when none.
    public var locale: String

    public init(ipAddress: String = "", userAgent: String = "", locale: String = "en") {
        self.ipAddress = ipAddress
        self.userAgent = userAgent
        self.locale = locale
    }

    /// The client of the request being answered.
    @TaskLocal public static var current = SignInClient()
}
