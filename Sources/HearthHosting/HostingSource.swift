/// What a rewrite, redirect or header rule applies to: a glob (`source`) or an RE2 regular
/// expression (`regex`), matched against the request's decoded, normalized path.
public enum HostingSource: Sendable, CustomStringConvertible {
    case glob(GlobPattern)
    case regex(HostingRegex)

    /// Whether `path` matches.
    public func matches(_ path: String) -> Bool {
        captures(in: path) != nil
    }

    /// The captures of a match (a glob's `:name` segments; a regex's numbered and named
    /// groups), or nil when `path` does not match.
    public func captures(in path: String) -> [String: String]? {
        switch self {
        case .glob(let glob): glob.captures(in: path)
        case .regex(let regex): regex.captures(in: path)
        }
    }

    public var description: String {
        switch self {
        case .glob(let glob): "source \(glob.pattern)"
        case .regex(let regex): "regex \(regex.pattern)"
        }
    }
}
