import AsyncHTTPClient
import Foundation
import HearthCore
import NIOCore
import NIOHTTP1

/// File storage through Hearth's Firebase Storage REST API.
///
/// ```swift
/// let storage = Storage(url: server, auth: auth)
/// let photo = storage.reference("\(uid)/full/\(postId)/photo.jpg")
/// let metadata = try await photo.putData(jpeg, contentType: "image/jpeg") { sent, total in … }
/// let url = try await photo.downloadURL()
/// ```
public final class Storage: Sendable {
    public let url: URL
    /// The bucket files go in (Firebase's default is `<project>.appspot.com`).
    public let bucket: String
    let transport: HTTPTransport
    let credentials: Database.Credentials
    /// The size of each piece of a resumable upload (progress is reported per piece).
    public let chunkSize: Int

    public convenience init(
        url: URL, bucket: String = "hearth.appspot.com", auth: Auth? = nil, httpClient: HTTPClient = .hearth,
        chunkSize: Int = 256 * 1024
    ) {
        self.init(url: url, bucket: bucket, credentials: auth.map(Database.Credentials.auth) ?? .none, httpClient: httpClient, chunkSize: chunkSize)
    }

    /// Storage whose requests carry `token` (the server's admin token, or an ID token).
    public convenience init(url: URL, bucket: String = "hearth.appspot.com", token: String, httpClient: HTTPClient = .hearth) {
        self.init(url: url, bucket: bucket, credentials: .token(token), httpClient: httpClient, chunkSize: 256 * 1024)
    }

    init(url: URL, bucket: String, credentials: Database.Credentials, httpClient: HTTPClient, chunkSize: Int) {
        self.url = url
        self.bucket = bucket
        self.credentials = credentials
        self.transport = HTTPTransport(client: httpClient)
        self.chunkSize = max(1, chunkSize)
    }

    /// The file at `path` (such as `alice/full/p1/photo.jpg`).
    public func reference(_ path: String) -> StorageReference {
        StorageReference(storage: self, path: path.split(separator: "/").joined(separator: "/"))
    }

    public var root: StorageReference { StorageReference(storage: self, path: "") }

    // MARK: - Requests

    var objectsURL: String {
        var base = url.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        return base + "/v0/b/" + (bucket.addingPercentEncoding(withAllowedCharacters: .pathSegmentAllowed) ?? bucket) + "/o"
    }

    func objectURL(_ path: String) -> String {
        objectsURL + "/" + (path.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? path)
    }

    func headers() async throws -> [(String, String)] {
        switch credentials {
        case .none: return []
        case .token(let token): return [("Authorization", "Bearer \(token)")]
        case .auth(let auth):
            guard let token = try await auth.idToken() else { return [] }
            return [("Authorization", "Firebase \(token)")]
        }
    }

    func send(
        _ method: HTTPMethod, _ url: String, headers: [(String, String)] = [], body: ByteBuffer? = nil, allowing: Set<Int> = [200, 204]
    ) async throws -> HTTPTransport.Response {
        let response = try await transport.send(method, url, headers: try await self.headers() + headers, body: body)
        guard allowing.contains(response.status) else { throw Self.error(response) }
        return response
    }

    /// The error an answer carries (`{"error": {"code": 403, "message": "…"}}`).
    static func error(_ response: HTTPTransport.Response) -> HearthClientError {
        var message = response.text
        if let node = try? JSONParser.parse(response.bytes).node,
            case .string(let text) = node.child(ChildKey("error")).child(ChildKey("message"))
        {
            message = text
        }
        return HearthClientError.from(status: response.status, message: message)
    }
}

/// A file's metadata, as Firebase Storage reports it.
public struct StorageMetadata: Sendable, Equatable, Decodable {
    public let name: String
    public let bucket: String
    public let contentType: String?
    public let md5Hash: String?
    public let cacheControl: String?
    /// Custom metadata (`metadata` in the REST API).
    public let customMetadata: [String: String]
    public let downloadTokens: [String]
    let sizeText: String
    let generationText: String
    let timeCreatedText: String?
    let updatedText: String?

    /// The size in bytes.
    public var size: Int64 { Int64(sizeText) ?? 0 }
    public var generation: Int64 { Int64(generationText) ?? 0 }
    public var timeCreated: Date? { timeCreatedText.flatMap { try? Date($0, strategy: .iso8601) } }
    public var updated: Date? { updatedText.flatMap { try? Date($0, strategy: .iso8601) } }

    enum CodingKeys: String, CodingKey {
        case name, bucket, contentType, md5Hash, cacheControl, metadata, downloadTokens
        case size, generation, timeCreated, updated
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        bucket = try container.decode(String.self, forKey: .bucket)
        contentType = try container.decodeIfPresent(String.self, forKey: .contentType)
        md5Hash = try container.decodeIfPresent(String.self, forKey: .md5Hash)
        cacheControl = try container.decodeIfPresent(String.self, forKey: .cacheControl)
        customMetadata = try container.decodeIfPresent([String: String].self, forKey: .metadata) ?? [:]
        downloadTokens = (try container.decodeIfPresent(String.self, forKey: .downloadTokens))?
            .split(separator: ",").map(String.init) ?? []
        sizeText = try container.decodeIfPresent(String.self, forKey: .size) ?? "0"
        generationText = try container.decodeIfPresent(String.self, forKey: .generation) ?? "0"
        timeCreatedText = try container.decodeIfPresent(String.self, forKey: .timeCreated)
        updatedText = try container.decodeIfPresent(String.self, forKey: .updated)
    }

    static func decode(_ response: HTTPTransport.Response) throws -> StorageMetadata {
        do {
            return try JSONDecoder().decode(StorageMetadata.self, from: Data(response.bytes))
        } catch {
            throw HearthClientError(.unexpectedResponse, status: response.status, "The server sent metadata this client cannot read.")
        }
    }
}

/// One page of a folder's listing.
public struct StorageListResult: Sendable, Equatable {
    /// Sub-folders.
    public let prefixes: [StorageReference]
    /// Files directly in the folder.
    public let items: [StorageReference]
    public let pageToken: String?
}
