import ArgumentParser
import Foundation
import HearthFiles
import NIOFileSystem

/// `hearth files`: manage stored files in a data folder (works while a server runs on it).
struct Files: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage stored files (list, upload, download, delete).",
        subcommands: [List.self, Put.self, Get.self, Remove.self]
    )

    /// Options every `files` command takes.
    struct Options: ParsableArguments {
        @Option(name: .long, help: "The folder that holds the data.")
        var data: String = "hearth-data"

        @Option(name: .long, help: "The bucket (default: <project>.appspot.com).")
        var bucket: String?

        @Option(name: .long, help: "The project ID, which names the default bucket.")
        var project: String = "hearth"

        var bucketName: String { bucket ?? "\(project).appspot.com" }

        func store() throws -> FileStore {
            try FileStore(
                directory: URL(fileURLWithPath: data).appendingPathComponent("files"),
                clock: { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) })
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ls", abstract: "List files: size, content type, updated time and name.")

        @Argument(help: "Only names starting with this prefix.")
        var prefix: String = ""

        @Flag(name: .shortAndLong, help: "List everything below the prefix, not just one level.")
        var recursive = false

        @OptionGroup var options: Options

        func run() async throws {
            try await Files.perform {
                let store = try options.store()
                var token: String?
                repeat {
                    let page = try await store.list(
                        bucket: options.bucketName, prefix: prefix, delimiter: recursive ? nil : "/", pageToken: token)
                    for folder in page.prefixes { print("\(String(repeating: " ", count: 10))  \(folder)") }
                    for object in page.items {
                        let updated = Date(timeIntervalSince1970: TimeInterval(object.updated) / 1000)
                        print("\(String(object.size).leftPadded(to: 10))  \(object.contentType)  \(updated.ISO8601Format())  \(object.name)")
                    }
                    token = page.nextPageToken
                } while token != nil
            }
        }
    }

    struct Put: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Upload a local file (streamed, never read whole).")

        @Argument(help: "The local file.")
        var file: String

        @Argument(help: "The name to store it under (default: the file's name).")
        var name: String?

        @Option(name: .long, help: "The content type (default: guessed from the extension).")
        var contentType: String?

        @OptionGroup var options: Options

        func run() async throws {
            try await Files.perform {
                let store = try options.store()
                let target = name ?? URL(fileURLWithPath: file).lastPathComponent
                let type = contentType ?? Files.contentType(forExtension: URL(fileURLWithPath: file).pathExtension)
                let object = try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(file)) { handle in
                    try await store.upload(
                        bucket: options.bucketName, name: target, fields: ObjectFields(contentType: type),
                        body: handle.readChunks(chunkLength: .kibibytes(256)))
                }
                print("\(object.size) bytes stored as \(object.name) (\(object.contentType))")
            }
        }
    }

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Download a file to a local file or standard output.")

        @Argument(help: "The stored file's name.")
        var name: String

        @Argument(help: "Where to write it, or - for standard output (default: its last name segment).")
        var output: String?

        @OptionGroup var options: Options

        func run() async throws {
            try await Files.perform {
                let store = try options.store()
                guard let object = try await store.object(bucket: options.bucketName, name: name) else { throw FilesError.notFound }
                let destination = output ?? String(name.split(separator: "/").last ?? Substring(name))
                let source = URL(fileURLWithPath: store.contentPath(of: object))
                if destination == "-" {
                    let input = try FileHandle(forReadingFrom: source)
                    while let chunk = try input.read(upToCount: 1 << 18), !chunk.isEmpty {
                        FileHandle.standardOutput.write(chunk)
                    }
                } else {
                    let target = URL(fileURLWithPath: destination)
                    try? FileManager.default.removeItem(at: target)
                    try FileManager.default.copyItem(at: source, to: target)
                    print("\(object.size) bytes written to \(destination)")
                }
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Delete files.")

        @Argument(help: "The names of the files to delete.")
        var names: [String]

        @OptionGroup var options: Options

        func run() async throws {
            try await Files.perform {
                let store = try options.store()
                for name in names {
                    try await store.delete(bucket: options.bucketName, name: name)
                    print("deleted \(name)")
                }
            }
        }
    }

    /// Runs a file operation; a refusal is printed as `error: <message>` with exit status 1.
    static func perform(_ work: () async throws -> Void) async throws {
        do {
            try await work()
        } catch let error as FilesError {
            fail(error.message)
        } catch let error as FileSystemError where error.code == .notFound {
            fail("no such local file")
        }
    }

    private static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("error: \(message)\n".utf8))
        Foundation.exit(1)
    }

    /// A content type for common file extensions; others are `application/octet-stream`.
    static func contentType(forExtension pathExtension: String) -> String {
        switch pathExtension.lowercased() {
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "gif": "image/gif"
        case "webp": "image/webp"
        case "svg": "image/svg+xml"
        case "heic": "image/heic"
        case "mp4": "video/mp4"
        case "mov": "video/quicktime"
        case "mp3": "audio/mpeg"
        case "pdf": "application/pdf"
        case "json": "application/json"
        case "txt": "text/plain"
        case "html", "htm": "text/html"
        case "css": "text/css"
        case "js": "text/javascript"
        default: "application/octet-stream"
        }
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
