/// Why a function could not be loaded, registered or given an event. The messages name what
/// is wrong and where, for an operator to act on.
public enum FunctionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A function's definition (a manifest entry, a webhook, a Swift registration) is wrong.
    case invalidDefinition(function: String, String)
    /// The functions folder or its manifest could not be read.
    case unloadable(String)
    /// A stored event could not be read back.
    case invalidEvent(String)

    public var description: String {
        switch self {
        case .invalidDefinition(let function, let reason): "function \(function): \(reason)"
        case .unloadable(let reason): reason
        case .invalidEvent(let reason): "invalid event: \(reason)"
        }
    }
}
