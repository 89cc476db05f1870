/// A failure of durable storage: the data folder cannot be used as asked.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) { self.message = message }

    /// Stored data that cannot be read back.
    static func corrupt(_ detail: String) -> StoreError { StoreError("stored data is damaged: \(detail)") }

    public var description: String { message }
}
