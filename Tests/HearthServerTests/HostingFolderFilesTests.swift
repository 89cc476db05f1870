import Foundation
import HearthTesting
import Testing

@testable import HearthServer

/// The server's own folders inside a public folder of `.` are never served.
@Suite("The hosted folder's files")
struct HostingFolderFilesTests {
    @Test("A data folder inside the public folder is not served; one outside changes nothing")
    func serverFoldersAreNotServed() async throws {
        let folder = try TemporaryDirectory(prefix: "hearth-hosted-folder")
        defer { folder.remove() }
        let data = folder.url.appendingPathComponent("hearth-data")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        try Data("token".utf8).write(to: data.appendingPathComponent("admin-token"))
        try Data("page".utf8).write(to: folder.url.appendingPathComponent("index.html"))
        let files = HostingFolderFiles(folder: folder.url, excluding: [data, URL(fileURLWithPath: "/tmp/elsewhere")])
        #expect(try await files.location(of: "hearth-data/admin-token") == nil)
        #expect(try await files.location(of: "index.html") != nil)
        #expect(files.excluded.count == 1)
        #expect(try await HostingFolderFiles(folder: folder.url).location(of: "hearth-data/admin-token") != nil)
    }
}
