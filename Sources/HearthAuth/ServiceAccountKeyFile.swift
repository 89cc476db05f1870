/// A service account's key file, in the JSON form Google's tools write and its client
/// libraries (`google-auth`, `firebase_admin`'s `credentials.Certificate`) read.
public struct ServiceAccountKeyFile: Encodable, Sendable {
    public var type = "service_account"
    public var projectID: String
    public var privateKeyID: String
    /// PKCS #8 PEM: the only copy there is.
    public var privateKey: String
    public var clientEmail: String
    public var clientID: String
    /// Where a client trades an assertion for an access token: this server's token endpoint.
    public var tokenURI: String

    enum CodingKeys: String, CodingKey {
        case type
        case projectID = "project_id"
        case privateKeyID = "private_key_id"
        case privateKey = "private_key"
        case clientEmail = "client_email"
        case clientID = "client_id"
        case tokenURI = "token_uri"
    }
}
