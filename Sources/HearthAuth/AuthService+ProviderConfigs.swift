import Foundation
import HearthCore
import Logging

/// Sign-in provider configurations, as Firebase's admin API (v2) manages them.
extension AuthService {
    /// Creates provider `id`'s configuration from a request's resource (its `name` ignored).
    public func createProviderConfig(id: String, kind: ProviderConfig.Kind, resource: Node) async throws(AuthError) -> ProviderConfig {
        guard ProviderConfig.Kind(providerID: id) == kind, Self.isValidProviderID(id) else {
            throw AuthError("INVALID_PROVIDER_ID", detail: "\(kind.idParameter) must name a provider of this kind")
        }
        let config = try ProviderConfig(id: id, kind: kind, resource: Self.withoutName(resource)).withDefaults().validated()
        let now = clock()
        try await withStore { try await store.putProviderConfig(config, create: true, now: now) }
        logger.info("sign-in provider added", metadata: ["provider": "\(id)"])
        return config
    }

    /// Changes the fields `mask` names (dotted paths, `responseType.code`) to the request's
    /// values; a field the request leaves out or sets to null is removed. Without a mask,
    /// every field the request has is set.
    public func updateProviderConfig(id: String, kind: ProviderConfig.Kind, changes: Node, mask: [String]?) async throws(AuthError) -> ProviderConfig {
        guard var config = try await providerConfig(id: id), config.kind == kind else { throw .configurationNotFound }
        let paths = mask ?? (changes.children.map { Array($0) } ?? []).map(\.key.string).filter { $0 != "name" }
        for path in paths where !path.isEmpty {
            let keys = path.split(separator: ".").map { ChildKey(String($0)) }
            guard keys.first?.string != "name" else { continue }
            let location = Path(keys: keys)
            config.resource = config.resource.setting(changes.child(at: location), at: location)
        }
        let updated = try config.validated()
        let now = clock()
        try await withStore { try await store.putProviderConfig(updated, create: false, now: now) }
        return updated
    }

    public func providerConfig(id: String) async throws(AuthError) -> ProviderConfig? {
        try await withStore { try await store.providerConfig(id: id) }
    }

    public func deleteProviderConfig(id: String, kind: ProviderConfig.Kind) async throws(AuthError) {
        guard let config = try await providerConfig(id: id), config.kind == kind else { throw .configurationNotFound }
        _ = try await withStore { try await store.deleteProviderConfig(id: id) }
        logger.info("sign-in provider removed", metadata: ["provider": "\(id)"])
    }

    /// One page of `kind`'s configurations in ID order; the page token is the last ID given.
    public func providerConfigs(kind: ProviderConfig.Kind?, pageToken: String?, pageSize: Int) async throws(AuthError) -> (configs: [ProviderConfig], next: String?) {
        guard (1...100).contains(pageSize) else { throw .invalidArgument("pageSize must be between 1 and 100") }
        let page = try await withStore { try await store.providerConfigs(kind: kind, after: pageToken, limit: pageSize + 1) }
        let configs = Array(page.prefix(pageSize))
        return (configs, page.count > pageSize ? configs.last?.id : nil)
    }

    /// The enabled providers people can sign in with (OIDC and built-in, not SAML).
    public func signInProviders() async throws(AuthError) -> [ProviderConfig] {
        try await withStore { try await store.providerConfigs(kind: nil, after: nil, limit: 1000) }
            .filter { $0.enabled && $0.kind != .saml }
    }

    /// Writes providers from the settings file (replacing the stored ones with the same IDs),
    /// so the admin API and console show them too.
    public func installProviders(_ configs: [ProviderConfig]) async throws(AuthError) {
        let now = clock()
        for config in configs {
            let checked = try config.validated()
            try await withStore {
                let exists = try await store.providerConfig(id: checked.id) != nil
                try await store.putProviderConfig(checked, create: !exists, now: now)
            }
        }
    }

    /// `oidc.` or `saml.` and a name of letters, digits, `-` and `_`; or a built-in name.
    static func isValidProviderID(_ id: String) -> Bool {
        if ProviderConfig.builtInProviders.contains(id) { return true }
        let name = id.drop { $0 != "." }.dropFirst()
        return !name.isEmpty && name.count <= 64 && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
    }

    private static func withoutName(_ resource: Node) -> Node {
        .object((resource.children.map { Array($0) } ?? []).filter { $0.key.string != "name" })
    }
}
