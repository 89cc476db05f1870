/// A response header an owner's `headers` configuration sets (`{"key": …, "value": …}`).
public struct HostingHeader: Sendable, Hashable {
    public let name: String
    public let value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}
