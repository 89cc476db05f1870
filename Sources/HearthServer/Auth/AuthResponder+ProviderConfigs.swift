import Foundation
import HearthAuth
import HearthCore
import HearthEngine
import Hummingbird

/// Firebase's v2 admin API for sign-in providers:
/// `projects/<project>/{oauthIdpConfigs,inboundSamlConfigs,defaultSupportedIdpConfigs}[/<id>]`.
extension AuthResponder {
    func providerConfigEndpoint(_ endpoint: String, request: Request) async throws -> Response {
        let parts = endpoint.split(separator: "/").map(String.init)
        guard parts.count >= 3, parts.count <= 4, parts[0] == "projects", let kind = ProviderConfig.Kind(rawValue: parts[2]) else {
            throw AuthError("NOT_FOUND", status: 404)
        }
        let project = service.issuer.projectID
        let parameters = request.uri.queryParameters
        if parts.count == 3 {
            switch request.method {
            case .get:
                let size = parameters["pageSize"].flatMap { Int(String($0)) } ?? 100
                let (configs, next) = try await service.providerConfigs(
                    kind: kind, pageToken: parameters["pageToken"].map(String.init).flatMap { $0.isEmpty ? nil : $0 }, pageSize: size)
                var entries: [(ChildKey, Node)] = []
                if !configs.isEmpty { entries.append((ChildKey(kind.rawValue), Self.list(configs.map { $0.served(project: project) }))) }
                if let next { entries.append((ChildKey("nextPageToken"), .string(next))) }
                return Self.json(.object(entries))
            case .post:
                guard let id = parameters[Substring(kind.idParameter)].map(String.init), !id.isEmpty else {
                    throw AuthError("MISSING_PROVIDER_ID", detail: "\(kind.idParameter) is required")
                }
                let body = try await body(of: request, allowForm: false)
                let config = try await service.createProviderConfig(id: id, kind: kind, resource: body.node)
                return Self.json(config.served(project: project))
            default:
                throw AuthError("METHOD_NOT_ALLOWED", status: 405)
            }
        }
        let id = parts[3]
        switch request.method {
        case .get:
            guard let config = try await service.providerConfig(id: id), config.kind == kind else { throw AuthError.configurationNotFound }
            return Self.json(config.served(project: project))
        case .patch:
            let body = try await body(of: request, allowForm: false)
            let mask = parameters["updateMask"].map { String($0).split(separator: ",").map(String.init) }
            let config = try await service.updateProviderConfig(id: id, kind: kind, changes: body.node, mask: mask)
            return Self.json(config.served(project: project))
        case .delete:
            try await service.deleteProviderConfig(id: id, kind: kind)
            return Self.json(.object([]))
        default:
            throw AuthError("METHOD_NOT_ALLOWED", status: 405)
        }
    }
}
