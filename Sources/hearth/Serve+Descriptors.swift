#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Serve {
    /// Raises the soft limit on open descriptors to the hard limit, as servers do at start; the
    /// connection and database limits are then worked out from it.
    static func raiseDescriptorLimit() {
        var limit = rlimit()
        #if canImport(Glibc)
        let resource = Int32(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        var raised = limit
        raised.rlim_cur = limit.rlim_max
        #if canImport(Darwin)
        // macOS refuses more than OPEN_MAX for the soft limit.
        raised.rlim_cur = min(raised.rlim_cur, rlim_t(OPEN_MAX))
        #endif
        _ = setrlimit(resource, &raised)
    }
}
