/// Decides how a site answers a request, in Firebase Hosting's documented order of precedence:
///
/// 1. the reserved namespace `/__/…` (left to the server);
/// 2. the configured `redirects`, the first that matches;
/// 3. exact-match static content, with `cleanUrls` and `trailingSlash` (which may redirect);
/// 4. the configured `rewrites`, the first that matches: to a file of the site, or to a function;
/// 5. the site's `404.html`, else the server's 404.
///
/// There is one rewrite pass: a rewrite's destination is served as a file or not at all, never
/// matched against the rewrites again, so no configuration can loop. Headers are the `headers`
/// rules that match the request's path. A file answers `GET` and `HEAD` only; a function gets
/// every method.
public struct HostingResolver: Sendable {
    public let site: HostingSite

    /// Firebase Hosting's default for files whose headers set no `Cache-Control`.
    public static let defaultCacheControl = "max-age=3600"

    public init(site: HostingSite) {
        self.site = site
    }

    /// The decision for `request`, asking `files` which files exist (ignored files count as absent).
    /// - Throws: what `files` throws.
    public func resolve(_ request: HostingRequest, files: some HostingFileLookup) async throws -> HostingDecision {
        guard let path = HostingPath.normalize(request.path) else { return HostingDecision(.badRequest) }
        if path == "/__" || path.hasPrefix("/__/") { return HostingDecision(.reserved(path)) }
        let query = request.query.flatMap { $0.isEmpty ? nil : $0 }
        for redirect in site.redirects {
            if let captures = redirect.source.captures(in: path) {
                let location = Self.appending(query, to: Self.substitute(captures, into: redirect.destination))
                return HostingDecision(.redirect(location: location, status: redirect.status))
            }
        }
        let lookup = SiteFiles(site: site, files: files)
        if let outcome = try await staticContent(path, query: query, files: lookup) {
            switch outcome {
            case .file(let file):
                guard request.isRead else { return HostingDecision(.methodNotAllowed) }
                return HostingDecision(.file(file, status: 200), headers: headers(for: [path], file: true))
            case .redirect(let location):
                return HostingDecision(.redirect(location: location, status: 301))
            }
        }
        if let rewrite = site.rewrites.first(where: { $0.source.matches(path) }) {
            switch rewrite.target {
            case .function(let name, let region):
                return HostingDecision(.function(name: name, region: region), headers: headers(for: [path], file: false))
            case .path(let destination):
                if let file = try await rewrittenFile(destination, files: lookup) {
                    guard request.isRead else { return HostingDecision(.methodNotAllowed) }
                    return HostingDecision(.file(file, status: 200), headers: headers(for: [path], file: true))
                }
            }
        }
        if try await lookup.exists("/404.html") {
            return HostingDecision(.file("404.html", status: 404), headers: headers(for: [path, "/404.html"], file: true))
        }
        return HostingDecision(.notFound, headers: headers(for: [path], file: false))
    }

    /// Whether a request for `path` goes to a function when no static file takes it: no
    /// redirect matches, and the first matching rewrite names a function. The server asks this
    /// of a CORS preflight (`OPTIONS`), which it answers itself unless the function should.
    public func rewritesToFunction(_ path: String) -> Bool {
        guard let path = HostingPath.normalize(path), path != "/__", !path.hasPrefix("/__/"),
            !site.redirects.contains(where: { $0.source.captures(in: path) != nil }),
            let rewrite = site.rewrites.first(where: { $0.source.matches(path) }), case .function = rewrite.target
        else { return false }
        return true
    }

    /// What static content answers `path`, as Firebase's server works it out (an exact file
    /// first; then a folder's `index.html`; then, with `cleanUrls`, the path plus `.html`).
    enum StaticOutcome: Equatable {
        case file(String)
        case redirect(String)
    }

    func staticContent(_ path: String, query: String?, files: SiteFiles) async throws -> StaticOutcome? {
        let trailingSlash = site.trailingSlash
        func redirect(_ location: String) -> StaticOutcome { .redirect(Self.appending(query, to: location.isEmpty ? "/" : location)) }
        if try await files.exists(path) {
            if site.cleanUrls, path.hasSuffix(".html") {
                var clean = String(path.dropLast(".html".count))
                if clean.hasSuffix("/index") { clean = String(clean.dropLast("/index".count)) }
                if trailingSlash == true, !clean.hasSuffix("/") { clean += "/" }
                return redirect(clean)
            }
            return .file(Self.relative(path))
        }
        let hasSlash = path.hasSuffix("/")
        let withSlash = hasSlash ? path : path + "/"
        let index = withSlash + "index.html"
        if try await files.exists(index) {
            if trailingSlash == nil, !hasSlash, !site.cleanUrls { return redirect(withSlash) }
            if trailingSlash == false, hasSlash, path != "/" { return redirect(String(path.dropLast())) }
            if trailingSlash == true, !hasSlash { return redirect(withSlash) }
            return .file(Self.relative(index))
        }
        guard site.cleanUrls else { return nil }
        var candidate = path
        if hasSlash {
            // `/about/` is `about.html` only where trailing slashes are configured either way.
            guard trailingSlash != nil else { return nil }
            candidate = String(path.dropLast()) + ".html"
        } else {
            candidate += ".html"
        }
        guard candidate != ".html", try await files.exists(candidate) else { return nil }
        if trailingSlash == false, hasSlash { return redirect(String(path.dropLast())) }
        if trailingSlash == true, !hasSlash {
            var clean = String(candidate.dropLast(".html".count))
            if clean.hasSuffix("/index") { clean = String(clean.dropLast("/index".count)) }
            return redirect(clean.hasSuffix("/") ? clean : clean + "/")
        }
        if candidate.hasSuffix("/index.html") { return redirect(String(candidate.dropLast("/index.html".count))) }
        return .file(Self.relative(candidate))
    }

    /// The file a rewrite's destination names: the file itself, or a folder's `index.html`.
    private func rewrittenFile(_ path: String, files: SiteFiles) async throws -> String? {
        if !path.hasSuffix("/"), try await files.exists(path) { return Self.relative(path) }
        let index = (path.hasSuffix("/") ? path : path + "/") + "index.html"
        return try await files.exists(index) ? Self.relative(index) : nil
    }

    /// The `headers` rules matching any of `paths`, in order, merged by name (case-insensitive,
    /// the later value kept in the first one's place), with the default `Cache-Control` for files.
    func headers(for paths: [String], file: Bool) -> [HostingHeader] {
        var merged: [HostingHeader] = []
        for path in paths {
            for rule in site.headers where rule.source.matches(path) {
                for header in rule.headers {
                    if let index = merged.firstIndex(where: { $0.name.lowercased() == header.name.lowercased() }) {
                        merged[index] = header
                    } else {
                        merged.append(header)
                    }
                }
            }
        }
        if file, !merged.contains(where: { $0.name.lowercased() == "cache-control" }) {
            merged.append(HostingHeader(name: "Cache-Control", value: Self.defaultCacheControl))
        }
        return merged
    }

    static func relative(_ path: String) -> String {
        String(path.drop { $0 == "/" })
    }

    /// `location` with the request's query kept (`?q` added, or `&q` when it has a query).
    static func appending(_ query: String?, to location: String) -> String {
        guard let query else { return location }
        return location + (location.contains("?") ? "&" : "?") + query
    }
}

/// A site's files as the resolver sees them: ignored files are absent.
struct SiteFiles {
    let site: HostingSite
    let files: any HostingFileLookup

    /// Whether `path` (absolute, normalized) is a file of the site.
    func exists(_ path: String) async throws -> Bool {
        let relative = HostingResolver.relative(path)
        guard !relative.isEmpty, !relative.hasSuffix("/"), !site.isIgnored(relative) else { return false }
        return try await files.isFile(relative)
    }
}
