/// An error a client caused or can act on, carrying Firebase's message text.
///
/// The ``code`` says what kind of failure it is (transports map it to a status); the
/// ``message`` is the exact text Firebase clients expect to see in `{"error": "..."}`.
public struct HearthError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure. New kinds can be added without breaking callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case invalidData, invalidPath, writeTooBig, invalidQuery, indexNotDefined
            case permissionDenied, preconditionFailed, unavailable, notFound, internalError
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The request body or value is not acceptable data.
        public static let invalidData = Code(.invalidData)
        /// The path has a character or segment Firebase does not allow.
        public static let invalidPath = Code(.invalidPath)
        /// The write is larger than a single request may change.
        public static let writeTooBig = Code(.writeTooBig)
        /// The query parameters are invalid or combined in an unsupported way.
        public static let invalidQuery = Code(.invalidQuery)
        /// A query needs an `.indexOn` that the rules do not declare.
        public static let indexNotDefined = Code(.indexNotDefined)
        /// The rules deny the operation.
        public static let permissionDenied = Code(.permissionDenied)
        /// A condition (such as an ETag) did not hold.
        public static let preconditionFailed = Code(.preconditionFailed)
        /// The database cannot take the request now (for example, storage failed).
        public static let unavailable = Code(.unavailable)
        /// The thing asked for does not exist.
        public static let notFound = Code(.notFound)
        /// Something went wrong inside the server.
        public static let internalError = Code(.internalError)

        public var description: String { base.rawValue }
    }

    /// The kind of failure.
    public let code: Code
    /// The message, in Firebase's words where Firebase has them.
    public let message: String

    /// Creates an error of a kind with a message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}

extension HearthError {
    /// `Invalid data; couldn't parse JSON object, array, or value.`
    public static let unparseableData = HearthError(
        .invalidData, "Invalid data; couldn't parse JSON object, array, or value."
    )

    /// A PATCH body that is not an object of valid keys.
    public static let invalidUpdateObject = HearthError(
        .invalidData, "Invalid data; couldn't parse JSON object. Are you sending a JSON object with valid key names?"
    )

    /// `Invalid path: Invalid token in path`
    public static let invalidPathToken = HearthError(.invalidPath, "Invalid path: Invalid token in path")

    /// A write over the size limit.
    public static let writeTooBig = HearthError(
        .writeTooBig, "Data to write exceeds the maximum size that can be modified with a single request."
    )

    /// A bad key inside a body, at a 1-based line and column.
    public static func invalidKey(line: Int, column: Int) -> HearthError {
        HearthError(
            .invalidData,
            "Invalid data; couldn't parse key beginning at \(line):\(column). Key value can't be empty or contain $ # [ ] / or ."
        )
    }
}
