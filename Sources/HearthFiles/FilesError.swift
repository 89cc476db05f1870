/// A refused or failed file-storage request: an HTTP status and a message in Firebase
/// Storage's words, answered as `{"error": {"code": status, "message": message}}`.
public struct FilesError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of refusal this is; the transport decides how it is written (Cloud Storage's
    /// JSON API answers each with its own HTTP status).
    public enum Kind: String, Sendable, Equatable {
        /// A malformed request: a bad name, bucket, offset or size.
        case invalid
        /// The credential sent could not be verified.
        case unauthenticated
        /// The storage rules refused the request.
        case forbidden
        case notFound
        /// The method is not one the addressed resource takes.
        case methodNotAllowed
        /// Another request holds the resource (a resumable upload being written).
        case conflict
        /// The object is over the size limit.
        case tooLarge
        /// A byte range outside the object.
        case rangeNotSatisfiable
        /// A condition the request set (the object's generation or metageneration) does not hold.
        case preconditionFailed
        /// This client has too much open (unfinished uploads).
        case tooMany
        /// The server holds too much to take this now; retry later.
        case unavailable
        /// A fault of the server's own.
        case internalError
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { "\(kind.rawValue): \(message)" }

    /// No such object (or upload).
    public static let notFound = FilesError(.notFound, "Not Found.")
    /// The storage rules refused the request.
    public static let permissionDenied = FilesError(.forbidden, "Permission denied.")

    /// The storage rules refused a request of `kind` (`READ`, `LIST` or `WRITE`), in the
    /// words of Firebase's storage emulator.
    public static func permissionDenied(_ kind: String) -> FilesError {
        FilesError(.forbidden, "Permission denied. No \(kind) permission.")
    }
    /// The object is bigger than the server allows.
    public static func tooLarge(limit: Int64) -> FilesError {
        FilesError(.tooLarge, "Object exceeds the maximum allowed size of \(limit) bytes.")
    }
    public static func badRequest(_ message: String) -> FilesError {
        FilesError(.invalid, message)
    }
    /// A name Hearth does not store: empty, too long, with control characters or `.`/`..` segments.
    public static func invalidName(_ reason: String) -> FilesError {
        FilesError(.invalid, "Invalid object name: \(reason).")
    }
    public static let invalidBucket = FilesError(.invalid, "Invalid bucket name.")
    /// A resumable upload that was finished or cancelled.
    public static let uploadNotActive = FilesError(.invalid, "Upload is not active.")
    /// More bytes than the client declared (`Content-Length`, or a resumable upload's size).
    public static func overDeclaredSize(_ declared: Int64) -> FilesError {
        FilesError(.invalid, "The upload is larger than its declared size of \(declared) bytes.")
    }
    /// The caller has ``UploadLimits/maxOpenPerOwner`` resumable uploads open already.
    public static let tooManyUploads = FilesError(.tooMany, "Too many unfinished uploads: finish or cancel some first.")
    /// Unfinished uploads hold ``UploadLimits/maxPendingBytes``, or ``UploadLimits/maxOpen``
    /// resumable uploads are open: the SDKs retry this status later.
    public static let uploadsFull = FilesError(.unavailable, "The server holds too many unfinished uploads; try again later.")
    /// A generation or metageneration condition (``ObjectPreconditions``) that does not hold,
    /// in Cloud Storage's words.
    public static let conditionNotMet = FilesError(
        .preconditionFailed, "At least one of the pre-conditions you specified did not hold.")
    /// A chunk that does not start where the upload has got to.
    public static func wrongOffset(expected: Int64) -> FilesError {
        FilesError(.invalid, "Invalid request: the upload offset must be \(expected).")
    }
}
