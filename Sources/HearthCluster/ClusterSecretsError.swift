/// A secret that cannot be had.
public struct ClusterSecretsError: Error, CustomStringConvertible {
    public var description: String

    init(_ description: String) { self.description = description }
}
