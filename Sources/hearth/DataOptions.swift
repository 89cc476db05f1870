import ArgumentParser
import Foundation
import HearthCore
import HearthServer
import HearthStore
import Logging

/// Options shared by the commands that open the data folder.
struct DataOptions: ParsableArguments {
    @Option(name: .long, help: "The folder that holds the data.")
    var data: String = "hearth-data"

    @Option(name: .long, help: "The database (namespace) to use.")
    var database: String = "default"

    var dataURL: URL { URL(fileURLWithPath: data) }

    func validate() throws {
        guard DataFolder.isValidDatabaseName(database) else {
            throw ValidationError("'\(database)' is not a valid database name (use a-z, 0-9 and -).")
        }
    }

    /// Opens the folder, explaining what to do when a server holds it.
    func openFolder(logger: Logger) throws -> DataFolder {
        do {
            return try DataFolder(url: dataURL, logger: logger)
        } catch let error as StoreError {
            throw ValidationError("\(error.message). Stop the server, or use another --data folder.")
        }
    }

    /// Parses `--path`, failing with Firebase's message for a bad one.
    static func path(_ text: String) throws -> Path {
        do {
            return try Path(parsing: text)
        } catch {
            throw ValidationError("\(error.message): \(text)")
        }
    }
}

extension Logger {
    /// A logger for command-line use, writing to standard error.
    static func cli(level: Logger.Level = .warning) -> Logger {
        var logger = Logger(label: "hearth") { ConsoleLogHandler(label: $0) }
        logger.logLevel = level
        return logger
    }
}
