/// One of `hosting.headers`: the headers responses to matching paths get. Every matching rule
/// applies, in order; a later rule's value for the same header replaces an earlier one's.
public struct HostingHeaderRule: Sendable {
    public let source: HostingSource
    public let headers: [HostingHeader]

    public init(source: HostingSource, headers: [HostingHeader]) {
        self.source = source
        self.headers = headers
    }
}
