/// An `http` or `https` URL written so that browsers and this server read the same host in it:
/// what a user is sent on to (`continueUrl`, `continueUri`) or comes back from (`requestUri`),
/// before its host is checked against the authorized domains.
///
/// Browsers parse URLs by the WHATWG URL Standard, which forgives much that RFC 3986 parsers
/// such as Foundation's `URLComponents` read differently: in `http://evil.example\@127.0.0.1/`
/// a browser takes `\` for `/` and goes to `evil.example`, where Foundation sees user info and
/// the host `127.0.0.1`; tabs and newlines are dropped (`ev\til.example`), `%2e` in a host is a
/// dot, and `0x7f.1`, `0177.0.0.1` and `2130706433` are all `127.0.0.1`. Rather than follow every
/// such rule, only the plain form that both read alike is accepted:
///
/// - the scheme `http` or `https` (any case), then exactly `//`;
/// - no user info (`@` before the path), no `%` in the host, no backslash, whitespace or
///   control or formatting characters anywhere;
/// - a host of ASCII letters, digits, `-` and `_` in dot-separated, non-empty labels (no
///   trailing dot), an IPv4 address only in dotted decimal (`127.0.0.1`, nothing else that ends
///   in a number), or an IPv6 address in brackets (no zone);
/// - an optional port of digits up to 65535.
///
/// Anything else is refused rather than guessed at: a URL an app really uses is never written
/// in the other forms.
public struct BrowserURL: Sendable, Equatable {
    /// `http` or `https`.
    public let scheme: String
    /// The host in lower case; an IPv6 address without brackets, in its shortest form (`::1`).
    public let host: String
    /// The port, when the URL names one.
    public let port: Int?
    /// What follows the host and port: the path, query and fragment as written (may be empty).
    public let rest: String

    /// The longest URL accepted, in UTF-8 bytes.
    public static let maxLength = 8192

    /// Parses `text`; nil unless it is such a URL.
    public init?(_ text: String) {
        guard !text.isEmpty, text.utf8.count <= Self.maxLength,
            !text.unicodeScalars.contains(where: Self.isRefused),
            let colon = text.firstIndex(of: ":")
        else { return nil }
        let scheme = text[..<colon].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        let afterScheme = text[text.index(after: colon)...]
        // `http:host`, `http:/host` and `http:///host` all reach `host` in a browser.
        guard afterScheme.hasPrefix("//") else { return nil }
        let hierarchy = afterScheme.dropFirst(2)
        let end = hierarchy.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? hierarchy.endIndex
        let authority = hierarchy[..<end]
        guard !authority.isEmpty, authority.unicodeScalars.allSatisfy(Self.isAuthorityScalar) else { return nil }
        let hostText: Substring
        let portText: Substring?
        if authority.first == "[" {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            hostText = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            guard after.isEmpty || after.first == ":" else { return nil }
            portText = after.isEmpty ? nil : after.dropFirst()
            guard let address = Self.ipv6(hostText) else { return nil }
            host = address
        } else {
            let parts = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            hostText = parts[0]
            portText = parts.count == 2 ? parts[1] : nil
            guard let name = Self.hostName(hostText) else { return nil }
            host = name
        }
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.unicodeScalars.allSatisfy(Self.isDigit),
                let value = Int(portText), value <= 65535
            else { return nil }
            port = value
        } else {
            port = nil
        }
        self.scheme = scheme
        rest = String(hierarchy[end...])
    }

    /// True when the host is one of `domains`, compared exactly (in any case; an IPv6 domain
    /// in any of its forms): a subdomain, a longer name ending in a domain, or a name with a
    /// domain in front (`app.example.com.evil.com`) is not it.
    public func isAuthorized(by domains: Set<String>) -> Bool {
        domains.contains { Self.normalizedDomain($0) == host }
    }

    /// An authorized domain as hosts are compared: lower case, an IPv6 address without
    /// brackets and in its shortest form.
    static func normalizedDomain(_ domain: String) -> String {
        var name = domain.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name.contains(":"), let address = ipv6(Substring(name)) { return address }
        return name
    }

    // MARK: - Parts

    /// Characters that browsers drop or read as a separator, wherever they are: control and
    /// formatting characters, whitespace of any kind, and `\` (a `/` to a browser).
    private static func isRefused(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value <= 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\\" { return true }
        let properties = scalar.properties
        return properties.isWhitespace || properties.generalCategory == .format || properties.generalCategory == .control
    }

    /// What a host and port may be written with: no `@` (user info), no `%` (an encoded host).
    private static func isAuthorityScalar(_ scalar: Unicode.Scalar) -> Bool {
        isLabelScalar(scalar) || scalar == "." || scalar == ":" || scalar == "[" || scalar == "]"
    }

    private static func isLabelScalar(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || isDigit(scalar) || scalar == "-" || scalar == "_"
    }

    private static func isDigit(_ scalar: Unicode.Scalar) -> Bool { ("0"..."9").contains(scalar) }

    /// A host name in lower case, or nil when a browser could read it as another host.
    private static func hostName(_ text: Substring) -> String? {
        let name = text.lowercased()
        guard !name.isEmpty, name.utf8.count <= 253 else { return nil }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        // An empty label is a leading or trailing dot or `..`: `app.example.com.` is another
        // name than the authorized `app.example.com` to a browser's cookies and origins.
        guard labels.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 63 && $0.unicodeScalars.allSatisfy(isLabelScalar) }) else {
            return nil
        }
        // A name whose last label is a number is an IPv4 address to a browser, which reads
        // `0x7f.1`, `0177.0.0.1` and `127.1` as 127.0.0.1 and refuses `evil.com.127.0.0.1`:
        // only four decimal parts as they are written canonically are taken.
        if let last = labels.last, endsInNumber(last) {
            let isCanonicalIPv4 = labels.count == 4 && labels.allSatisfy { label in
                label.count <= 3 && label.unicodeScalars.allSatisfy(isDigit) && (label == "0" || label.first != "0")
                    && (Int(label) ?? 256) <= 255
            }
            guard isCanonicalIPv4 else { return nil }
        }
        return name
    }

    /// WHATWG's "ends in a number": decimal digits, or `0x` and hexadecimal digits.
    private static func endsInNumber(_ label: Substring) -> Bool {
        if label.unicodeScalars.allSatisfy(isDigit) { return true }
        guard label.hasPrefix("0x") else { return false }
        return label.dropFirst(2).unicodeScalars.allSatisfy { isDigit($0) || ("a"..."f").contains($0) }
    }

    /// An IPv6 address in its shortest form, or nil (an IPv4 address in brackets, a zone, text).
    private static func ipv6(_ text: Substring) -> String? {
        guard text.contains(":"),
            text.unicodeScalars.allSatisfy({ isDigit($0) || ("a"..."f").contains($0) || ("A"..."F").contains($0) || $0 == ":" || $0 == "." }),
            let bytes = IPAddress.v6(String(text))
        else { return nil }
        return IPAddress.v6Text(bytes)
    }
}
