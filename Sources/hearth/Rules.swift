import ArgumentParser
import Foundation
import HearthRules

/// `hearth rules`: work with security rules files.
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
                let problems = RulesDocument.problems(in: text)
                for problem in problems {
                    print("\(file):\(problem.position.line):\(problem.position.column): error: \(problem.message)")
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
    }
}
