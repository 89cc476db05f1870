/// How a request's outcome reads in a realtime response (`{"s": <status>, "d": <message>}`):
/// the status codes the SDKs know, so they raise the error their apps expect
/// (`PERMISSION_DENIED: Permission denied`, a transaction retried on `datastale`, …).
public struct RealtimeStatus: Equatable, Sendable {
    /// The wire status (one of the constants below).
    public var status: String
    /// The human-readable text sent with a status other than `ok`.
    public var message: String

    /// A status as sent on the wire.
    public init(status: String, message: String) {
        self.status = status
        self.message = message
    }

    /// Success.
    public static let ok = "ok"
    /// The rules refused the request.
    public static let permissionDenied = "permission_denied"
    /// A compare-and-set (a transaction's put) met another value than the one it expected.
    public static let dataStale = "datastale"
    /// The connection's credential has expired.
    public static let expiredToken = "expired_token"
    /// The connection's credential cannot be read.
    public static let invalidToken = "invalid_token"
    /// A write past the size a database takes.
    public static let writeTooBig = "write_too_big"
    /// The server cannot take the request now.
    public static let unavailable = "unavailable"
    /// Any other failure.
    public static let failed = "failed"
}
