/// A function called over HTTP (a callable, or a plain HTTPS function), as clients reach it
/// at Firebase's emulator path: `/<project>/<region>/<name>[/<path>]`.
public struct HTTPFunction: Sendable {
    public var name: String
    public var region: String
    /// True for Firebase's callable protocol (the caller's ID token is checked first).
    public var isCallable: Bool
    /// Where its process listens.
    public var url: String
    /// How long one call may take.
    public var timeout: Duration

    public init(name: String, region: String, isCallable: Bool, url: String, timeout: Duration) {
        self.name = name
        self.region = region
        self.isCallable = isCallable
        self.url = url
        self.timeout = timeout
    }
}
