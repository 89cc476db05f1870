/// A problem in a rules document, with where it is.
public struct RulesError: Error, Sendable, Hashable, CustomStringConvertible {
    public let position: SourcePosition
    public let message: String

    public init(_ message: String, at position: SourcePosition) {
        self.message = message
        self.position = position
    }

    /// `line 3, column 7: message`.
    public var description: String { "line \(position.line), column \(position.column): \(message)" }
}
