/// A failure of durable storage: the data folder cannot be used as asked.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What failed, in words for the operator.
    public let message: String

    init(_ message: String) { self.message = message }

    /// Stored data that cannot be read back.
    static func corrupt(_ detail: String) -> StoreError { StoreError("stored data is damaged: \(detail)") }

    /// The message, for logs.
    public var description: String { message }
}
