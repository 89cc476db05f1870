/// A refused or failed file-storage request: an HTTP status and a message in Firebase
/// Storage's words, answered as `{"error": {"code": status, "message": message}}`.
public struct FilesError: Error, Sendable, Equatable, CustomStringConvertible {
    public let status: Int
    public let message: String

    public init(status: Int, _ message: String) {
        self.status = status
        self.message = message
    }

    public var description: String { "\(status) \(message)" }

    /// No such object (or upload).
    public static let notFound = FilesError(status: 404, "Not Found.")
    /// The storage rules refused the request.
    public static let permissionDenied = FilesError(status: 403, "Permission denied.")

    /// The storage rules refused a request of `kind` (`READ`, `LIST` or `WRITE`), in the
    /// words of Firebase's storage emulator.
    public static func permissionDenied(_ kind: String) -> FilesError {
        FilesError(status: 403, "Permission denied. No \(kind) permission.")
    }
    /// The object is bigger than the server allows.
    public static func tooLarge(limit: Int64) -> FilesError {
        FilesError(status: 413, "Object exceeds the maximum allowed size of \(limit) bytes.")
    }
    public static func badRequest(_ message: String) -> FilesError {
        FilesError(status: 400, message)
    }
    /// A name Hearth does not store: empty, too long, with control characters or `.`/`..` segments.
    public static func invalidName(_ reason: String) -> FilesError {
        FilesError(status: 400, "Invalid object name: \(reason).")
    }
    public static let invalidBucket = FilesError(status: 400, "Invalid bucket name.")
    /// A resumable upload that was finished or cancelled.
    public static let uploadNotActive = FilesError(status: 400, "Upload is not active.")
    /// More bytes than the client declared (`Content-Length`, or a resumable upload's size).
    public static func overDeclaredSize(_ declared: Int64) -> FilesError {
        FilesError(status: 400, "The upload is larger than its declared size of \(declared) bytes.")
    }
    /// The caller has ``UploadLimits/maxOpenPerOwner`` resumable uploads open already.
    public static let tooManyUploads = FilesError(status: 429, "Too many unfinished uploads: finish or cancel some first.")
    /// Unfinished uploads hold ``UploadLimits/maxPendingBytes``, or ``UploadLimits/maxOpen``
    /// resumable uploads are open: the SDKs retry this status later.
    public static let uploadsFull = FilesError(status: 503, "The server holds too many unfinished uploads; try again later.")
    /// A chunk that does not start where the upload has got to.
    public static func wrongOffset(expected: Int64) -> FilesError {
        FilesError(status: 400, "Invalid request: the upload offset must be \(expected).")
    }
}
