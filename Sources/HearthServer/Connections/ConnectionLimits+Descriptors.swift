#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
import HearthEngine
#endif

extension ConnectionLimits {
    /// The process's soft limit on open descriptors (`getrlimit(RLIMIT_NOFILE)`), or nil when it
    /// has none or it cannot be read.
    public static func descriptorLimit() -> Int? {
        var limit = rlimit()
        #if canImport(Glibc)
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        let infinity = rlim_t.max  // Glibc's RLIM_INFINITY, a macro Swift does not import
        #elseif canImport(Darwin)
        guard getrlimit(RLIMIT_NOFILE, &limit) == 0 else { return nil }
        let infinity = RLIM_INFINITY
        #else
        return nil
        #endif
        return limit.rlim_cur == infinity ? nil : Int(clamping: limit.rlim_cur)
    }

    /// ``maxConnections`` as set, or else worked out from the process's descriptor limit; nil
    /// when neither gives a cap.
    public func resolvedMaxConnections() -> Int? {
        maxConnections ?? Self.descriptorLimit().map(Self.automaticMaxConnections(descriptorLimit:))
    }
}
