/// Why a glob or regular expression source was refused; ``HostingConfiguration`` puts it
/// under the key it came from.
public struct GlobPatternError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong with the pattern.
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
