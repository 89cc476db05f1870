import HearthCore

/// A sign-in provider's configuration, kept as Firebase's resource (`oauthIdpConfigs`,
/// `inboundSamlConfigs`, `defaultSupportedIdpConfigs`), so the admin API reads and writes it as
/// Firebase does; the properties read the parts sign-in uses.
public struct ProviderConfig: Sendable, Equatable {
    /// Which of Firebase's collections the provider belongs to.
    public enum Kind: String, Sendable, CaseIterable {
        /// `oidc.<name>`: any OpenID Connect provider.
        case oidc = "oauthIdpConfigs"
        /// `saml.<name>`: stored and served; sign-in with SAML is not offered.
        case saml = "inboundSamlConfigs"
        /// A provider Firebase knows by name (`github.com`, `google.com`, `apple.com`).
        case builtIn = "defaultSupportedIdpConfigs"

        /// The kind a provider ID names, if any.
        public init?(providerID: String) {
            if providerID.hasPrefix("oidc.") {
                self = .oidc
            } else if providerID.hasPrefix("saml.") {
                self = .saml
            } else if ProviderConfig.builtInProviders.contains(providerID) {
                self = .builtIn
            } else {
                return nil
            }
        }

        /// The query parameter naming a new config's ID.
        public var idParameter: String {
            switch self {
            case .oidc: "oauthIdpConfigId"
            case .saml: "inboundSamlConfigId"
            case .builtIn: "idpId"
            }
        }
    }

    /// The providers Hearth knows how to sign in with besides `oidc.*`: GitHub (OAuth 2.0) and
    /// the OIDC ones Firebase names (Google, Apple, Yahoo) by their issuers. (Microsoft's
    /// multi-tenant issuer is a pattern, not an issuer: configure a tenant as `oidc.<name>`.)
    public static let builtInProviders: Set<String> = ["github.com", "google.com", "apple.com", "yahoo.com"]

    /// The issuers of the built-in OpenID Connect providers.
    public static let builtInIssuers: [String: String] = [
        "google.com": "https://accounts.google.com",
        "apple.com": "https://appleid.apple.com",
        "yahoo.com": "https://api.login.yahoo.com",
    ]

    public var id: String
    public var kind: Kind
    /// The resource without its `name`.
    public var resource: Node

    public init(id: String, kind: Kind, resource: Node) {
        self.id = id
        self.kind = kind
        self.resource = resource
    }

    private func string(_ path: String...) -> String? {
        var node = resource
        for key in path { node = node.child(ChildKey(key)) }
        if case .string(let text) = node { return text }
        return nil
    }

    public var displayName: String? { string("displayName") }
    /// Providers are enabled unless they say otherwise.
    public var enabled: Bool {
        if case .bool(let flag) = resource.child(ChildKey("enabled")) { return flag }
        return true
    }
    public var clientID: String? { string("clientId") }
    public var clientSecret: String? { string("clientSecret") }
    /// The OpenID issuer (for `oidc.*`, and the built-in OIDC providers by name).
    public var issuer: String? { string("issuer") ?? Self.builtInIssuers[id] }

    /// The resource as the admin API answers it, with `name` first. As Firebase does, response
    /// types that are off are left out.
    public func served(project: String) -> Node {
        var entries = resource.children.map { Array($0) } ?? []
        if let index = entries.firstIndex(where: { $0.key.string == "responseType" }) {
            let on = (entries[index].1.children.map { Array($0) } ?? []).filter { $0.value != .bool(false) }
            entries[index].1 = .object(on)
        }
        return .object([(ChildKey("name"), .string("projects/\(project)/\(kind.rawValue)/\(id)"))] + entries)
    }

    /// A new OIDC configuration without response types uses the ID-token flow, as Firebase's.
    func withDefaults() -> ProviderConfig {
        guard kind == .oidc, resource.child(ChildKey("responseType")).isNull else { return self }
        var copy = self
        copy.resource = resource.updatingChild(ChildKey("responseType"), to: .object([(ChildKey("idToken"), .bool(true))]))
        return copy
    }

    /// Checks what a create or update left: the fields sign-in needs, well formed.
    public func validated() throws(AuthError) -> ProviderConfig {
        func invalid(_ detail: String) -> AuthError { AuthError("INVALID_CONFIG", detail: detail) }
        if let github = string("githubURL") {
            guard id == "github.com" else { throw invalid("githubURL is a setting of github.com only") }
            guard Self.isHTTPURL(github) else { throw invalid("githubURL must be the http(s) address of a GitHub server") }
        }
        switch kind {
        case .oidc:
            guard let client = clientID, !client.isEmpty else { throw AuthError("MISSING_OAUTH_CLIENT_ID") }
            guard let issuer = string("issuer"), !issuer.isEmpty else { throw AuthError("MISSING_ISSUER") }
            guard Self.isHTTPURL(issuer) else { throw invalid("issuer must be an http(s) URL") }
            if case .bool(true) = resource.child(ChildKey("responseType")).child(ChildKey("code")), clientSecret == nil {
                throw AuthError("MISSING_OAUTH_CLIENT_SECRET")
            }
        case .saml:
            guard let entity = string("idpConfig", "idpEntityId"), !entity.isEmpty else { throw invalid("idpConfig.idpEntityId is required") }
            guard let sso = string("idpConfig", "ssoUrl"), Self.isHTTPURL(sso) else { throw invalid("idpConfig.ssoUrl must be an http(s) URL") }
            guard let certificates = resource.child(ChildKey("idpConfig")).child(ChildKey("idpCertificates")).children,
                !certificates.isEmpty,
                certificates.allSatisfy({
                    if case .string(let pem) = $0.value.child(ChildKey("x509Certificate")) { return pem.contains("BEGIN CERTIFICATE") }
                    return false
                })
            else { throw invalid("idpConfig.idpCertificates must hold PEM certificates") }
            guard let sp = string("spConfig", "spEntityId"), !sp.isEmpty else { throw AuthError("MISSING_SAML_RELYING_PARTY_CONFIG") }
            guard let callback = string("spConfig", "callbackUri"), Self.isHTTPURL(callback) else {
                throw invalid("spConfig.callbackUri must be an http(s) URL")
            }
        case .builtIn:
            guard let client = clientID, !client.isEmpty else { throw AuthError("MISSING_OAUTH_CLIENT_ID") }
            guard let secret = clientSecret, !secret.isEmpty else { throw AuthError("MISSING_OAUTH_CLIENT_SECRET") }

        }
        return self
    }

    static func isHTTPURL(_ text: String) -> Bool {
        guard let scheme = text.split(separator: ":").first?.lowercased() else { return false }
        return (scheme == "https" || scheme == "http") && text.contains("://") && text.count > scheme.count + 3
    }
}
