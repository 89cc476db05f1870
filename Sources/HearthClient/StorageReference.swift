import Foundation
import HearthCore
import NIOCore
import NIOHTTP1

/// A file in storage (or a folder, for listing), as Firebase's `StorageReference`.
public struct StorageReference: Sendable, Hashable, CustomStringConvertible {
    public let storage: Storage
    /// The full path, such as `alice/full/p1/photo.jpg` (empty at the root).
    public let fullPath: String

    init(storage: Storage, path: String) {
        self.storage = storage
        self.fullPath = path
    }

    /// The last segment of the path.
    public var name: String { fullPath.split(separator: "/").last.map(String.init) ?? "" }

    public var description: String { "gs://\(storage.bucket)/\(fullPath)" }

    public var parent: StorageReference? {
        guard !fullPath.isEmpty else { return nil }
        return StorageReference(storage: storage, path: fullPath.split(separator: "/").dropLast().joined(separator: "/"))
    }

    public func child(_ path: String) -> StorageReference {
        let joined = (fullPath.split(separator: "/") + path.split(separator: "/")).joined(separator: "/")
        return StorageReference(storage: storage, path: joined)
    }

    public static func == (lhs: StorageReference, rhs: StorageReference) -> Bool {
        lhs.storage === rhs.storage && lhs.fullPath == rhs.fullPath
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(storage))
        hasher.combine(fullPath)
    }

    // MARK: - Uploading

    /// Uploads `data` as this file, in pieces (a resumable upload), reporting progress after
    /// each piece as `(bytes sent, total bytes)`.
    @discardableResult
    public func putData(
        _ data: Data, contentType: String? = nil, customMetadata: [String: String] = [:],
        progress: (@Sendable (Int64, Int64) -> Void)? = nil
    ) async throws -> StorageMetadata {
        try await upload(size: Int64(data.count), contentType: contentType, customMetadata: customMetadata, progress: progress) { offset, length in
            data.subdata(in: Int(offset)..<Int(offset) + length)
        }
    }

    /// Uploads the local file at `fileURL`, read piece by piece (never whole).
    @discardableResult
    public func putFile(
        from fileURL: URL, contentType: String? = nil, customMetadata: [String: String] = [:],
        progress: (@Sendable (Int64, Int64) -> Void)? = nil
    ) async throws -> StorageMetadata {
        let handle = try FileHandle(forReadingFrom: fileURL)
        defer { try? handle.close() }
        let size = Int64(try handle.seekToEnd())
        return try await upload(size: size, contentType: contentType, customMetadata: customMetadata, progress: progress) { offset, length in
            try handle.seek(toOffset: UInt64(offset))
            return try handle.read(upToCount: length) ?? Data()
        }
    }

    private func upload(
        size: Int64, contentType: String?, customMetadata: [String: String], progress: (@Sendable (Int64, Int64) -> Void)?,
        piece: (Int64, Int) throws -> Data
    ) async throws -> StorageMetadata {
        var fields: [(ChildKey, Node)] = []
        if let contentType { fields.append((ChildKey("contentType"), .string(contentType))) }
        if !customMetadata.isEmpty {
            fields.append((ChildKey("metadata"), .object(customMetadata.map { (ChildKey($0.key), .string($0.value)) })))
        }
        var headers = [
            ("X-Goog-Upload-Protocol", "resumable"), ("X-Goog-Upload-Command", "start"),
            ("X-Goog-Upload-Header-Content-Length", String(size)), ("Content-Type", "application/json"),
        ]
        if let contentType { headers.append(("X-Goog-Upload-Header-Content-Type", contentType)) }
        let name = fullPath.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? fullPath
        let start = try await storage.send(
            .POST, storage.objectsURL + "?name=\(name)", headers: headers,
            body: ByteBuffer(bytes: JSONWriter.bytes(.object(fields))))
        guard let uploadURL = start.header("X-Goog-Upload-URL") else {
            throw HearthClientError(.unexpectedResponse, "The server gave no upload URL.")
        }
        var offset: Int64 = 0
        repeat {
            let length = Int(min(Int64(storage.chunkSize), size - offset))
            let bytes = try piece(offset, length)
            let last = offset + Int64(length) >= size
            let answer = try await storage.send(
                .POST, uploadURL,
                headers: [("X-Goog-Upload-Command", last ? "upload, finalize" : "upload"), ("X-Goog-Upload-Offset", String(offset))],
                body: ByteBuffer(bytes: bytes))
            offset += Int64(length)
            progress?(offset, size)
            if last { return try StorageMetadata.decode(answer) }
        } while true
    }

    // MARK: - Reading

    /// The file's content (refused past `maxSize` bytes).
    public func data(maxSize: Int64 = 64 << 20) async throws -> Data {
        let metadata = try await getMetadata()
        guard metadata.size <= maxSize else {
            throw HearthClientError(.badRequest, "The file is \(metadata.size) bytes, more than the \(maxSize) allowed.")
        }
        let response = try await storage.send(.GET, storage.objectURL(fullPath) + "?alt=media")
        return Data(response.bytes)
    }

    /// A URL anyone can download the file from (it carries a download token).
    public func downloadURL() async throws -> URL {
        let metadata = try await getMetadata()
        guard let token = metadata.downloadTokens.first else {
            throw HearthClientError(.notFound, "The file has no download token.")
        }
        guard let url = URL(string: storage.objectURL(fullPath) + "?alt=media&token=\(token)") else {
            throw HearthClientError(.badRequest, "The file's name does not make a URL.")
        }
        return url
    }

    public func getMetadata() async throws -> StorageMetadata {
        try StorageMetadata.decode(try await storage.send(.GET, storage.objectURL(fullPath)))
    }

    /// Sets custom metadata entries (nil removes one) and/or the cache control.
    @discardableResult
    public func updateMetadata(customMetadata: [String: String?] = [:], cacheControl: String? = nil) async throws -> StorageMetadata {
        var fields: [String: Any] = [:]
        if let cacheControl { fields["cacheControl"] = cacheControl }
        if !customMetadata.isEmpty {
            fields["metadata"] = customMetadata.mapValues { $0.map { $0 as Any } ?? NSNull() }
        }
        let body = try JSONSerialization.data(withJSONObject: fields)
        let response = try await storage.send(
            .PATCH, storage.objectURL(fullPath), headers: [("Content-Type", "application/json")], body: ByteBuffer(bytes: body))
        return try StorageMetadata.decode(response)
    }

    /// Deletes the file.
    public func delete() async throws {
        _ = try await storage.send(.DELETE, storage.objectURL(fullPath))
    }

    /// The files and sub-folders directly in this folder (all pages).
    public func listAll() async throws -> StorageListResult {
        var prefixes: [StorageReference] = []
        var items: [StorageReference] = []
        var token: String?
        repeat {
            var url = storage.objectsURL + "?delimiter=%2F"
            if !fullPath.isEmpty {
                url += "&prefix=" + ((fullPath + "/").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? fullPath)
            }
            if let token { url += "&pageToken=" + (token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token) }
            let page = try JSONParser.parse(try await storage.send(.GET, url).bytes).node
            for entry in page.child(ChildKey("prefixes")).children.map(Array.init) ?? [] {
                if case .string(let path) = entry.value { prefixes.append(StorageReference(storage: storage, path: String(path.dropLast()))) }
            }
            for entry in page.child(ChildKey("items")).children.map(Array.init) ?? [] {
                if case .string(let path) = entry.value.child(ChildKey("name")) { items.append(StorageReference(storage: storage, path: path)) }
            }
            if case .string(let next) = page.child(ChildKey("nextPageToken")) { token = next } else { token = nil }
        } while token != nil
        return StorageListResult(prefixes: prefixes, items: items, pageToken: nil)
    }
}
