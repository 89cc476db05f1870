/// Why a `firebase.json` cannot be served, naming the key at fault
/// (`hosting.rewrites[2].source`), so an owner can fix it without guessing.
public struct HostingConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem. New kinds can be added without breaking callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case invalidJSON, missingKey, wrongType, invalidValue, unknownKey, unsupported
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The file is not JSON (comments and trailing commas are allowed, as the Firebase CLI allows them).
        public static let invalidJSON = Code(.invalidJSON)
        /// A key that must be there is not.
        public static let missingKey = Code(.missingKey)
        /// A value of the wrong JSON type (a number where a string goes).
        public static let wrongType = Code(.wrongType)
        /// A value of the right type that is not acceptable (a bad glob, regex or status code).
        public static let invalidValue = Code(.invalidValue)
        /// A key Firebase Hosting does not know (a misspelling is an error, not silently ignored).
        public static let unknownKey = Code(.unknownKey)
        /// A Firebase Hosting feature Hearth does not offer (`i18n`, Cloud Run rewrites, …).
        public static let unsupported = Code(.unsupported)

        public var description: String { base.rawValue }
    }

    /// The kind of problem.
    public let code: Code
    /// The key path at fault, as written in `firebase.json` (`hosting.redirects[0].type`); empty
    /// for the file as a whole.
    public let keyPath: String
    /// What is wrong and what would be right.
    public let message: String

    /// - Parameters:
    ///   - code: the kind of problem.
    ///   - keyPath: the key at fault (`hosting.rewrites[2].source`).
    ///   - message: what is wrong.
    public init(_ code: Code, at keyPath: String, _ message: String) {
        self.code = code
        self.keyPath = keyPath
        self.message = message
    }

    public var description: String { keyPath.isEmpty ? message : "\(keyPath): \(message)" }
}
