import Foundation
import HearthAuth
import HearthCore
import HearthEngine
import Hummingbird

/// Firebase's v2 admin API for sign-in providers:
/// `projects/<project>/{oauthIdpConfigs,inboundSamlConfigs,defaultSupportedIdpConfigs}[/<id>]`.
extension AuthResponder {
    /// The kind named in a path (`oauthIdpConfigs`, …); NOT_FOUND for any other.
    static func providerKind(_ name: String?) throws -> ProviderConfig.Kind {
        guard let name, let kind = ProviderConfig.Kind(rawValue: name) else { throw AuthError.notFound }
        return kind
    }

    /// `GET …/<kind>`: a page of the configurations of a kind.
    func listProviderConfigs(_ kind: ProviderConfig.Kind, request: Request) async throws -> Response {
        let parameters = request.uri.queryParameters
        let size = parameters["pageSize"].flatMap { Int(String($0)) } ?? 100
        let (configs, next) = try await service.providerConfigs(
            kind: kind, pageToken: parameters["pageToken"].map(String.init).flatMap { $0.isEmpty ? nil : $0 }, pageSize: size)
        var entries: [(ChildKey, Node)] = []
        let project = service.issuer.projectID
        if !configs.isEmpty { entries.append((ChildKey(kind.rawValue), Self.list(configs.map { $0.served(project: project) }))) }
        if let next { entries.append((ChildKey("nextPageToken"), .string(next))) }
        return Self.json(.object(entries))
    }

    /// `POST …/<kind>?<kind's id parameter>=<id>`: a new configuration.
    func createProviderConfig(_ kind: ProviderConfig.Kind, request: Request) async throws -> Response {
        guard let id = request.uri.queryParameters[Substring(kind.idParameter)].map(String.init), !id.isEmpty else {
            throw AuthError("MISSING_PROVIDER_ID", detail: "\(kind.idParameter) is required")
        }
        let body = try await body(of: request, allowForm: false)
        let config = try await service.createProviderConfig(id: id, kind: kind, resource: body.node)
        return Self.json(config.served(project: service.issuer.projectID))
    }

    /// `GET …/<kind>/<id>`.
    func providerConfig(_ kind: ProviderConfig.Kind, id: String) async throws -> Response {
        guard let config = try await service.providerConfig(id: id), config.kind == kind else { throw AuthError.configurationNotFound }
        return Self.json(config.served(project: service.issuer.projectID))
    }

    /// `PATCH …/<kind>/<id>?updateMask=a,b`.
    func updateProviderConfig(_ kind: ProviderConfig.Kind, id: String, request: Request) async throws -> Response {
        let body = try await body(of: request, allowForm: false)
        let mask = request.uri.queryParameters["updateMask"].map { String($0).split(separator: ",").map(String.init) }
        let config = try await service.updateProviderConfig(id: id, kind: kind, changes: body.node, mask: mask)
        return Self.json(config.served(project: service.issuer.projectID))
    }

    /// `DELETE …/<kind>/<id>`.
    func deleteProviderConfig(_ kind: ProviderConfig.Kind, id: String) async throws -> Response {
        try await service.deleteProviderConfig(id: id, kind: kind)
        return Self.answer(EmptyAnswer())
    }
}
