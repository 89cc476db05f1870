import HearthCore

/// A client broke the realtime protocol: a frame or message the server cannot read. The
/// connection answers with an `e` (error) control message and closes.
public enum RealtimeProtocolError: Error, Equatable, CustomStringConvertible {
    /// Not a message of the protocol (bad JSON, missing or mistyped fields).
    case malformed(String)
    /// A message past the size a connection accepts.
    case messageTooLarge
    /// Data to write that Firebase's rules for data refuse (a bad key, too deep, …): the
    /// request is answered with the error and the connection stays.
    case invalidData(HearthError)

    /// The protocol error a framing error amounts to, for the connection to answer.
    public init(_ error: RealtimeFrameError) {
        switch error {
        case .malformed(let detail): self = .malformed(detail)
        case .messageTooLarge: self = .messageTooLarge
        }
    }

    /// The text sent to the client in the `e` message.
    public var description: String {
        switch self {
        case .malformed(let detail): return "Invalid message: \(detail)"
        case .messageTooLarge: return "The message is too large."
        case .invalidData(let error): return error.message
        }
    }
}
