extension HostingResolver {
    /// `destination` with each `:name` (or `:name*`; `:1` for a regex's groups) that names one of
    /// `captures` replaced by its value, percent-encoded as a URL would carry it. A `:word`
    /// naming no capture (`https:`, a port) is left as written; a `?` after a name starts the
    /// query (`/store/:slug?id=:1`).
    static func substitute(_ captures: [String: String], into destination: String) -> String {
        guard !captures.isEmpty, destination.contains(":") else { return destination }
        var out = ""
        var rest = destination[...]
        while let colon = rest.firstIndex(of: ":") {
            out += rest[..<colon]
            let nameStart = rest.index(after: colon)
            let nameEnd = rest[nameStart...].firstIndex { !($0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber))) } ?? rest.endIndex
            let name = String(rest[nameStart..<nameEnd])
            guard let value = captures[name] else {
                out += ":"
                rest = rest[nameStart...]
                continue
            }
            var after = nameEnd
            if after < rest.endIndex, rest[after] == "*" { after = rest.index(after: after) }
            out += encode(value)
            rest = rest[after...]
        }
        return out + rest
    }

    /// `value` with what a URL cannot carry as is percent-encoded (what JavaScript's `encodeURI`
    /// encodes, and `%` itself, since captures are decoded text).
    static func encode(_ value: String) -> String {
        let allowed = Set("-_.!~*'();/?:@&=+$,#")
        var out = ""
        for byte in value.utf8 {
            let scalar = Character(Unicode.Scalar(byte))
            if byte < 128, scalar.isLetter || scalar.isNumber || allowed.contains(scalar) {
                out.append(scalar)
            } else {
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
