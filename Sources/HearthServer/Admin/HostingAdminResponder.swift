import Foundation
import HearthCore
import HearthEngine
import Hummingbird

/// The console's view of the hosted app, for admins:
/// - `GET /.hearth/hosting`: what is served (a folder with `--hosting`, or the releases
///   deployed with `hearth hosting deploy`), the live release, and every release kept, newest
///   first;
/// - `GET /.hearth/hosting/files?release=<id>`: that release's files, by site and path (the
///   first 2,000, and how many there are);
/// - `POST /.hearth/hosting/rollback` with `{"release": "<id>"}` (or `{}` for the release
///   before the live one): makes it live, as `hearth hosting rollback` does; every node serving
///   the folder switches on its next request.
struct HostingAdminResponder: Sendable {
    static let path = "/.hearth/hosting"
    static let filesPath = "/.hearth/hosting/files"
    static let rollbackPath = "/.hearth/hosting/rollback"
    static let paths = [path, filesPath, rollbackPath]

    let source: HostingResponder.Source
    let releases: HostingReleases
    let admin: AdminCredential

    struct Listing: Encodable {
        /// `folder` (served as it is on disk) or `releases`.
        var mode: String
        /// The folder served, with `--hosting`.
        var folder: String?
        /// Where releases are kept.
        var releasesFolder: String
        var live: String?
        var releases: [HostingRelease]
        /// How to deploy a release here.
        var deployCommand: String

        /// `live` is `null` when nothing is deployed, not left out.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(mode, forKey: .mode)
            try container.encodeIfPresent(folder, forKey: .folder)
            try container.encode(releasesFolder, forKey: .releasesFolder)
            try container.encode(live, forKey: .live)
            try container.encode(releases, forKey: .releases)
            try container.encode(deployCommand, forKey: .deployCommand)
        }

        enum CodingKeys: String, CodingKey {
            case mode, folder, releasesFolder, live, releases, deployCommand
        }
    }

    struct FilesBody: Encodable {
        var release: String
        var files: [HostingReleaseFile]
        var total: Int
    }

    /// Failures are thrown, and written by the namespace's ``RealtimeDatabaseErrors``.
    func respond(to request: Request) async throws -> Response {
        let parameters = try await admin.admit(request, methods: [.get, .post])
        let releases = self.releases
        switch (request.uri.path, request.method) {
        case (Self.path, .get):
            let (live, list) = await BackupsResponder.offloaded { (releases.currentID(), releases.list()) }
            var folder: String?
            if case .folder(let deployment) = source { folder = deployment.settings.folder.path }
            return JSONResponse.encoding(Listing(
                mode: folder == nil ? "releases" : "folder", folder: folder, releasesFolder: releases.folder.path, live: live,
                releases: list, deployCommand: "hearth hosting deploy <folder> --files-dir \(releases.folder.deletingLastPathComponent().path)"))
        case (Self.filesPath, .get):
            guard let id = parameters["release"].map({ String($0) }), !id.isEmpty else {
                throw HearthError(.invalidData, "Name the release: ?release=<id>.")
            }
            let found = try await Self.answering { try releases.files(of: id) }
            return JSONResponse.encoding(FilesBody(release: id, files: found.files, total: found.total))
        case (Self.rollbackPath, .post):
            let id = try await Self.requestedRelease(in: request)
            let release = try await Self.answering { try releases.rollback(to: id) }
            return JSONResponse.encoding(["live": release])
        default:
            throw HearthError(.invalidData, "Invalid method for \(request.uri.path): \(request.method.rawValue).")
        }
    }

    /// Runs blocking release work off the event loop, its problems as the API's errors.
    private static func answering<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        do {
            return try await BackupsResponder.offloadedThrowing(body)
        } catch let problem as HostingReleases.Problem {
            switch problem {
            case .notFound(let words): throw HearthError(.notFound, words)
            case .invalid(let words): throw HearthError(.invalidData, words)
            case .failed(let words): throw HearthError(.internalError, words)
            }
        }
    }

    /// The `release` of the body (`{"release": "<id>"}`), or nil for `{}`.
    private static func requestedRelease(in request: Request) async throws(HearthError) -> String? {
        let bytes: ByteBuffer
        do {
            bytes = try await request.body.collect(upTo: 16 * 1024)
        } catch {
            throw HearthError(.invalidData, "The request body is too large.")
        }
        guard bytes.readableBytes > 0 else { return nil }
        let node = try JSONParser.parseDocument(Array(buffer: bytes))
        switch node.child(ChildKey("release")) {
        case .string(let id): return id
        case .null: return nil
        default: throw HearthError(.invalidData, "The body names a release as {\"release\": \"<id>\"}, or is {} for the one before the live one.")
        }
    }
}
