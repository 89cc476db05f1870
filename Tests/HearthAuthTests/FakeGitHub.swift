import Foundation
import HearthCore
import Synchronization
@testable import HearthAuth

/// GitHub as the account service sees it through ``HTTPFetching``: every access token is
/// good and belongs to one user, and each request is kept, so a test can tell whether the
/// provider was asked at all.
final class FakeGitHub: HTTPFetching {
    let userID: Int
    private let requests = Mutex<[OutboundRequest]>([])

    init(userID: Int = 4242) { self.userID = userID }

    /// The requests made so far.
    var asked: [OutboundRequest] { requests.withLock { $0 } }

    func fetch(_ request: OutboundRequest) async throws -> OutboundResponse {
        requests.withLock { $0.append(request) }
        let body: String
        if request.url.hasSuffix("/token") {
            body = "{}"
        } else if request.url.hasSuffix("/user/emails") {
            body = "[]"
        } else if request.url.hasSuffix("/user") {
            body = #"{"id": \#(userID), "login": "octocat", "name": "Octo Cat"}"#
        } else {
            return OutboundResponse(status: 404, body: Data("{}".utf8))
        }
        return OutboundResponse(status: 200, body: Data(body.utf8))
    }

    /// Enables GitHub sign-in on `service`.
    static func install(on service: AuthService) async throws {
        _ = try await service.createProviderConfig(
            id: "github.com", kind: .builtIn,
            resource: .object([(ChildKey("clientId"), .string("client")), (ChildKey("clientSecret"), .string("secret"))]))
    }

    /// What an app sends to sign in (or link) with a GitHub access token it holds.
    static let credential = AuthService.ProviderCredential.token(
        providerID: "github.com", idToken: nil, accessToken: "gho_token", nonce: nil)
}
