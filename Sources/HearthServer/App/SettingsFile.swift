import Foundation
import HearthAuth
import HearthCore
import HearthEngine
import HearthFunctions

/// `hearth serve --settings <file>`: what is too much for flags, as JSON.
///
/// ```json
/// {
///   "publicURL": "https://social.example.com",
///   "auth": {
///     "appName": "Hearth Social",
///     "authorizedDomains": ["www.example.com"],
///     "emailEnumerationProtection": true,
///     "email": {
///       "from": "Hearth Social <noreply@example.com>",
///       "smtp": { "host": "smtp.example.com", "port": 587, "security": "starttls",
///                 "username": "hearth", "passwordFile": "/etc/hearth/smtp-password",
///                 "trustedCertificates": "/etc/hearth/mail-ca.pem" },
///       "templates": "/etc/hearth/email-templates"
///     },
///     "providers": [
///       { "id": "oidc.corp", "displayName": "Corp SSO", "issuer": "https://sso.example.com",
///         "clientId": "hearth", "clientSecretFile": "/etc/hearth/corp-secret" },
///       { "id": "github.com", "clientId": "…", "clientSecret": "…" }
///     ]
///   },
///   "cluster": { "url": "postgres://hearth@db.internal/hearth", "passwordFile": "/etc/hearth/pg-password",
///                "nodeID": "node-1", "address": "http://10.0.0.11:9000", "filesDir": "/mnt/hearth-files" },
///   "hosting": { "folder": "/srv/my-app", "sdkDir": "/srv/firebase-js-sdk",
///                "hosts": { "blog.example.com": "blog" } },
///   "social": { "retention": { "postDays": 365, "inactiveAccountDays": 730, "schedule": "every 6 hours" },
///               "push": { "subject": "mailto:ops@example.com" } }
/// }
/// ```
/// Secrets may be given inline or, better, as `…File` paths. Relative paths are read from the
/// settings file's folder.
public struct SettingsFile: Decodable, Sendable {
    public var publicURL: String?
    public var auth: Auth?
    public var cluster: Cluster?
    public var hosting: Hosting?
    public var social: Social?

    /// The demo social app's server side (docs/social-server.md).
    public struct Social: Decodable, Sendable, Equatable {
        public var retention: Retention?
        public var push: Push?

        /// Web Push (notifications that reach a closed app).
        public struct Push: Decodable, Sendable, Equatable {
            /// The operator's contact push services are given (RFC 8292): `mailto:…` or `https://…`.
            public var subject: String?
        }

        /// Jobs that delete old data, off unless set.
        public struct Retention: Decodable, Sendable, Equatable {
            /// Posts older than this many days are removed, with everything pointing at them.
            public var postDays: Int?
            /// Accounts unused for this many days are deleted, with all their data.
            public var inactiveAccountDays: Int?
            /// When the jobs run: cron (`0 3 * * *`) or App Engine's form (`every 6 hours`).
            public var schedule: String?
        }
    }

    /// An owner's Firebase web app to serve (docs/hosting.md): the folder of its `firebase.json`
    /// (none: the releases deployed with `hearth hosting deploy`), a folder of Firebase SDK
    /// files, and host names mapped to its sites.
    public struct Hosting: Decodable, Sendable {
        public var folder: String?
        public var sdkDir: String?
        public var hosts: [String: String]?
    }

    /// Running as a node of a cluster (docs/cluster.md).
    public struct Cluster: Decodable, Sendable {
        public var url: String
        /// The PostgreSQL password, when the URL has none.
        public var password: String?
        public var passwordFile: String?
        public var nodeID: String?
        public var address: String?
        public var filesDir: String?
    }

    public struct Auth: Decodable, Sendable {
        public var appName: String?
        public var authorizedDomains: [String]?
        /// Firebase's "email enumeration protection" (default on; off answers `EMAIL_NOT_FOUND`
        /// and `INVALID_PASSWORD` as projects made before September 2023 do).
        public var emailEnumerationProtection: Bool?
        public var email: Email?
        public var providers: [Provider]?
    }

    public struct Email: Decodable, Sendable {
        public var from: String?
        public var smtp: SMTP?
        public var templates: String?
    }

    public struct SMTP: Decodable, Sendable {
        public var host: String
        public var port: Int?
        public var security: String?
        public var username: String?
        public var password: String?
        public var passwordFile: String?
        public var trustedCertificates: String?
    }

    public struct Provider: Decodable, Sendable {
        public var id: String
        public var displayName: String?
        public var enabled: Bool?
        public var issuer: String?
        public var clientId: String
        public var clientSecret: String?
        public var clientSecretFile: String?
        /// GitHub Enterprise Server's address (`github.com` only).
        public var githubURL: String?
    }

    /// A problem with the settings, naming the setting.
    public struct Problem: Error, CustomStringConvertible {
        public var description: String
    }

    /// Reads and checks the settings at `url`, then applies them to `configuration`.
    public static func apply(_ url: URL, to configuration: inout ServerConfiguration) throws {
        try read(url).apply(to: &configuration, folder: url.deletingLastPathComponent())
    }

    /// Reads and checks the settings at `url`.
    public static func read(_ url: URL) throws -> SettingsFile {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw Problem(description: "cannot read the settings file \(url.path): \(error.localizedDescription)")
        }
        try checkKnownKeys(data, file: url.path)
        let settings: SettingsFile
        do {
            settings = try JSONDecoder().decode(SettingsFile.self, from: data)
        } catch let DecodingError.keyNotFound(key, context) {
            throw Problem(description: "\(url.path): \(Self.path(context.codingPath + [key])) is missing")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.dataCorrupted(context) {
            throw Problem(description: "\(url.path): \(Self.path(context.codingPath)) is not valid (\(context.debugDescription))")
        } catch {
            throw Problem(description: "\(url.path) is not valid JSON settings: \(error)")
        }
        if let days = settings.social?.retention?.postDays, days < 1 {
            throw Problem(description: "\(url.path): social.retention.postDays must be at least 1")
        }
        if let days = settings.social?.retention?.inactiveAccountDays, days < 1 {
            throw Problem(description: "\(url.path): social.retention.inactiveAccountDays must be at least 1")
        }
        if let subject = settings.social?.push?.subject, !(subject.hasPrefix("mailto:") || subject.hasPrefix("https://")) || subject.count < 9 {
            throw Problem(description: "\(url.path): social.push.subject must be a mailto: or https: URI")
        }
        if let schedule = settings.social?.retention?.schedule {
            do {
                _ = try CronSchedule(schedule, timeZone: nil, function: "retention")
            } catch {
                throw Problem(description: "\(url.path): social.retention.schedule: \(error)")
            }
        }
        return settings
    }

    func apply(to configuration: inout ServerConfiguration, folder: URL) throws {
        func file(_ path: String) -> URL {
            path.hasPrefix("/") ? URL(fileURLWithPath: path) : folder.appendingPathComponent(path)
        }
        func secret(_ inline: String?, _ path: String?, _ name: String) throws -> String? {
            if let path {
                do {
                    return try String(contentsOf: file(path), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
                } catch {
                    throw Problem(description: "cannot read \(name) from \(path): \(error.localizedDescription)")
                }
            }
            return inline
        }
        if let publicURL {
            guard let origin = URL(string: publicURL), let scheme = origin.scheme, ["http", "https"].contains(scheme), origin.host != nil else {
                throw Problem(description: "publicURL must be an http(s) URL such as https://social.example.com")
            }
            configuration.publicURL = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        }
        if let cluster {
            guard var url = URLComponents(string: cluster.url), ["postgres", "postgresql"].contains(url.scheme ?? "") else {
                throw Problem(description: "cluster.url must be a PostgreSQL URL such as postgres://hearth@db.internal/hearth")
            }
            if let password = try secret(cluster.password, cluster.passwordFile, "cluster.password") {
                url.password = password
            }
            configuration.clusterURL = url.string
            if let id = cluster.nodeID { configuration.clusterNodeID = id }
            if let address = cluster.address { configuration.clusterNodeAddress = address }
            if let files = cluster.filesDir { configuration.filesDirectory = file(files) }
        }
        if let hosting {
            configuration.hostingHosts = Dictionary((hosting.hosts ?? [:]).map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
            configuration.hostingSDKFolder = hosting.sdkDir.map(file)
            if let folder = hosting.folder {
                do {
                    configuration.hosting = try HostingSettings.load(
                        folder: file(folder), hostSites: configuration.hostingHosts, sdkFolder: configuration.hostingSDKFolder)
                } catch {
                    throw Problem(description: "hosting: \(error)")
                }
            }
        }
        guard let auth else { return }
        if let name = auth.appName { configuration.appName = name }
        if let protection = auth.emailEnumerationProtection { configuration.emailEnumerationProtection = protection }
        for domain in auth.authorizedDomains ?? [] {
            let host = domain.lowercased()
            guard !host.isEmpty, !host.contains("/"), !host.contains(":"), !host.contains(" ") else {
                throw Problem(description: "auth.authorizedDomains: \(domain) is not a host name such as app.example.com")
            }
            configuration.authorizedDomains.append(host)
        }
        if let email = auth.email {
            if let from = email.from { configuration.emailSender = from }
            if let smtp = email.smtp {
                guard let security = SMTPMailer.Settings.Security(rawValue: smtp.security ?? "starttls") else {
                    throw Problem(description: "auth.email.smtp.security must be starttls, tls or none")
                }
                let port = smtp.port ?? (security == .tls ? 465 : 587)
                guard (1...65535).contains(port) else { throw Problem(description: "auth.email.smtp.port must be 1 to 65535") }
                configuration.smtp = SMTPMailer.Settings(
                    host: smtp.host, port: port, security: security, username: smtp.username,
                    password: try secret(smtp.password, smtp.passwordFile, "auth.email.smtp.password"),
                    trustedCertificatesFile: smtp.trustedCertificates.map { file($0).path })
            }
            if let templates = email.templates {
                do {
                    configuration.emailTemplates = try EmailTemplates(folder: file(templates))
                } catch {
                    throw Problem(description: "auth.email.templates: \(error)")
                }
            }
        }
        for provider in auth.providers ?? [] {
            guard let kind = ProviderConfig.Kind(providerID: provider.id), kind != .saml else {
                throw Problem(description: "auth.providers: \(provider.id) is not oidc.<name> or one of \(ProviderConfig.builtInProviders.sorted().joined(separator: ", "))")
            }
            var resource: [(ChildKey, Node)] = [(ChildKey("clientId"), .string(provider.clientId))]
            if let secret = try secret(provider.clientSecret, provider.clientSecretFile, "the client secret of \(provider.id)") {
                resource.append((ChildKey("clientSecret"), .string(secret)))
            }
            if let issuer = provider.issuer { resource.append((ChildKey("issuer"), .string(issuer))) }
            if let github = provider.githubURL { resource.append((ChildKey("githubURL"), .string(github))) }
            if let name = provider.displayName { resource.append((ChildKey("displayName"), .string(name))) }
            resource.append((ChildKey("enabled"), .bool(provider.enabled ?? true)))
            if kind == .oidc {
                resource.append((ChildKey("responseType"), .object([(ChildKey("code"), .bool(true))])))
            }
            let config = ProviderConfig(id: provider.id, kind: kind, resource: .object(resource))
            do {
                configuration.providers.append(try config.validated())
            } catch {
                throw Problem(description: "auth.providers: \(provider.id): \(error.message)")
            }
        }
    }

    /// The settings each object may hold: a misspelt one is an error, not silently ignored.
    private static let knownKeys: [String: Set<String>] = [
        "": ["publicURL", "auth", "cluster", "hosting", "social"],
        "social": ["retention", "push"],
        "social.push": ["subject"],
        "social.retention": ["postDays", "inactiveAccountDays", "schedule"],
        "hosting": ["folder", "sdkDir", "hosts"],
        "cluster": ["url", "password", "passwordFile", "nodeID", "address", "filesDir"],
        "auth": ["appName", "authorizedDomains", "emailEnumerationProtection", "email", "providers"],
        "auth.email": ["from", "smtp", "templates"],
        "auth.email.smtp": ["host", "port", "security", "username", "password", "passwordFile", "trustedCertificates"],
        "auth.providers[]": ["id", "displayName", "enabled", "issuer", "clientId", "clientSecret", "clientSecretFile", "githubURL"],
    ]

    private static func checkKnownKeys(_ data: Data, file: String) throws {
        guard let root = try? JSONSerialization.jsonObject(with: data) else { return }  // the decoder says what is wrong
        func visit(_ value: Any, at path: String, shown: String) throws {
            if let list = value as? [Any] {
                for (index, item) in list.enumerated() { try visit(item, at: path + "[]", shown: "\(shown)[\(index)]") }
                return
            }
            guard let object = value as? [String: Any], let known = knownKeys[path] else { return }
            for (key, child) in object {
                let named = shown.isEmpty ? key : "\(shown).\(key)"
                guard known.contains(key) else { throw Problem(description: "\(file): \(named) is not a setting") }
                try visit(child, at: path.isEmpty ? key : "\(path).\(key)", shown: named)
            }
        }
        try visit(root, at: "", shown: "")
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().trimmingCharacters(in: CharacterSet(charactersIn: "."))
    }
}
