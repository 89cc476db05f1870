import ArgumentParser
import Foundation
import HearthFiles
import HearthRules

/// `hearth rules`: work with security rules files: database rules (JSON) and storage rules
/// (`storage.rules`).
struct Rules: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check security rules files.",
        subcommands: [Check.self]
    )

    /// `hearth rules check FILE…`: reports every problem with its line and column.
    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check rules files and report every problem with its line and column (exit status 1 if any)."
        )

        @Argument(help: "The rules files to check.")
        var files: [String]

        func run() throws {
            var failed = false
            for file in files {
                let text: String
                do {
                    text = try String(contentsOfFile: file, encoding: .utf8)
                } catch {
                    print("\(file): error: cannot read the file: \(error.localizedDescription)")
                    failed = true
                    continue
                }
                var problems: [(line: Int, column: Int, message: String)] = []
                if Self.isStorageRules(text) {
                    // The storage rules parser stops at the first problem.
                    do {
                        _ = try StorageRules(parsing: text)
                    } catch {
                        problems.append((error.position.line, error.position.column, error.message))
                    }
                } else {
                    problems = RulesDocument.problems(in: text).map { ($0.position.line, $0.position.column, $0.message) }
                }
                for problem in problems {
                    print("\(file):\(problem.line):\(problem.column): error: \(problem.message)")
                }
                if problems.isEmpty {
                    print("\(file): OK")
                } else {
                    failed = true
                    print("\(file): \(problems.count) error\(problems.count == 1 ? "" : "s")")
                }
            }
            if failed { throw ExitCode(1) }
        }

        /// True for a `storage.rules` file: its first token (after comments) is not the `{` of
        /// a JSON document.
        static func isStorageRules(_ text: String) -> Bool {
            var rest = Substring(text)
            while true {
                rest = rest.drop(while: { $0.isWhitespace })
                if rest.hasPrefix("//") {
                    rest = rest.drop(while: { $0 != "\n" })
                } else if rest.hasPrefix("/*"), let end = rest.range(of: "*/") {
                    rest = rest[end.upperBound...]
                } else {
                    return !rest.hasPrefix("{")
                }
            }
        }
    }
}