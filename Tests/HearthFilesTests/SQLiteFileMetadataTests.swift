import Foundation
import HearthFiles
import HearthTesting
import Testing

/// A single node's file metadata in a real SQLite file: every ``FileMetadataBehaviour`` (the
/// checks the PostgreSQL store passes too).
@Suite struct SQLiteFileMetadataTests {
    @Test(arguments: FileMetadataBehaviour.allCases)
    func behaviour(_ behaviour: FileMetadataBehaviour) async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-file-metadata")
        defer { directory.remove() }
        try await behaviour.check(try SQLiteFileMetadata(path: directory.url.appendingPathComponent("files.sqlite").path))
    }
}
