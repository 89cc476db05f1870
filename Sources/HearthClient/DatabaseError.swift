/// Why a database, auth or storage call failed: the server's answer in its own words.
public struct HearthClientError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// Rules refused it (HTTP 401 from the database, 403 from storage).
        case permissionDenied
        /// Nothing there (HTTP 404).
        case notFound
        /// The request was refused as malformed or too large (HTTP 400, 413, …).
        case badRequest
        /// A transaction gave up after too many conflicting writes.
        case transactionConflict
        /// The user is signed out, or their session ended.
        case notSignedIn
        /// The server answered something this client does not understand.
        case unexpectedResponse
        /// The client is offline and the answer needs the server.
        case offline
    }

    public let kind: Kind
    /// The HTTP status, when there was an answer.
    public let status: Int?
    /// The server's message (`Permission denied`, `EMAIL_EXISTS`, …).
    public let message: String

    public init(_ kind: Kind, status: Int? = nil, _ message: String) {
        self.kind = kind
        self.status = status
        self.message = message
    }

    public var description: String { status.map { "\($0): \(message)" } ?? message }

    /// The error an HTTP status stands for.
    static func from(status: Int, message: String) -> HearthClientError {
        switch status {
        case 401, 403: HearthClientError(.permissionDenied, status: status, message)
        case 404: HearthClientError(.notFound, status: status, message)
        case 400..<500: HearthClientError(.badRequest, status: status, message)
        default: HearthClientError(.unexpectedResponse, status: status, message)
        }
    }
}
