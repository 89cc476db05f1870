import Foundation
import HearthEngine
import Hummingbird
import Synchronization

/// Where user files are served from when that is not the app's own origin, as Firebase serves
/// them from another host than the app's.
///
/// Two ways to set it up, which combine:
/// - `--files-port`: Hearth also listens on that port, where it answers only file storage;
///   the origin is the page's host with that port (`http://localhost:9001`).
/// - `--files-origin https://files.example.com`: the address browsers use for files, typically
///   a host name a TLS proxy sends to the files port (or to the main port: requests that arrive
///   for that host name are answered as the files origin whatever port they come in on).
///
/// With either, pages are told the origin (`storageOrigin` in `/__/firebase/init.json`) and
/// allow it in their CSP, and a browser that opens a file's link on the app's origin (no
/// `Authorization` header: a navigation, an image, a shared link) is redirected to it.
///
/// Threading: everything is immutable but the files listener's bound port, which its start
/// writes once and page requests on any event loop read, under a `Mutex`.
final class FilesOrigin: Sendable {
    /// The configured origin, `scheme://host[:port]`, lowercased; nil when only a port is set.
    let configured: String?
    /// The configured origin's `host[:port]` as a browser sends it in `Host`.
    private let configuredAuthority: String?
    /// The files listener's port, once it listens (with `--files-port`).
    private let boundPort = Mutex<Int?>(nil)

    /// - Parameter origin: `--files-origin`, already checked by ``validated(_:)``.
    init(origin: String?) {
        let url = origin.flatMap(URL.init(string:))
        configured = url.map(Self.origin(of:))
        configuredAuthority = url.map(Self.authority(of:))
    }

    /// Records the port the files listener bound (it may have been 0: any free port).
    func listening(on port: Int) { boundPort.withLock { $0 = port } }

    /// The files origin for a page addressed as `authority` (its `Host`) over `scheme`; nil when
    /// files share the app's origin.
    func origin(forAuthority authority: String?, scheme: String) -> String? {
        if let configured { return configured }
        guard let port = boundPort.withLock({ $0 }), let authority, let host = Self.hostName(of: authority) else { return nil }
        return "\(scheme)://\(host):\(port)"
    }

    /// True when a request addressed to `authority` is meant for the configured files host.
    func isFilesHost(_ authority: String?) -> Bool {
        guard let configuredAuthority, let authority else { return false }
        return authority.lowercased() == configuredAuthority
    }

    /// `origin` when it is `http(s)://host[:port]` with nothing after it, normalised; nil otherwise.
    static func validated(_ origin: String) -> String? {
        var text = origin
        while text.hasSuffix("/") { text.removeLast() }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty, url.path.isEmpty, url.query == nil, url.fragment == nil, url.user == nil
        else { return nil }
        return Self.origin(of: url)
    }

    private static func origin(of url: URL) -> String {
        "\(url.scheme!.lowercased())://\(authority(of: url))"
    }

    private static func authority(of url: URL) -> String {
        let host = url.host!.lowercased()
        let shown = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        let defaultPort = url.scheme?.lowercased() == "https" ? 443 : 80
        guard let port = url.port, port != defaultPort else { return shown }
        return "\(shown):\(port)"
    }

    /// The host of a `Host` value, without its port; nil unless it is a plain name or address
    /// (it is written into headers and pages: nothing else may come through).
    static func hostName(of authority: String) -> String? {
        let host: Substring
        if authority.hasPrefix("[") {
            guard let end = authority.firstIndex(of: "]") else { return nil }
            host = authority[...end]
            let inside = host.dropFirst().dropLast()
            guard !inside.isEmpty, inside.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
        } else {
            host = authority.lastIndex(of: ":").map { authority[..<$0] } ?? authority[...]
            guard !host.isEmpty, host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") })
            else { return nil }
        }
        let rest = authority[host.endIndex...]
        guard rest.isEmpty || (rest.first == ":" && rest.dropFirst().allSatisfy(\.isASCIIDigit)) else { return nil }
        return String(host)
    }
}
