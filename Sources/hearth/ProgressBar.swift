import Foundation

/// A one-line progress bar on standard error, drawn only when standard error is a terminal.
final class ProgressBar {
    let label: String
    let total: Int
    let enabled: Bool
    private var lastDrawn = -1

    init(label: String, total: Int) {
        self.label = label
        self.total = max(total, 1)
        self.enabled = isatty(STDERR_FILENO) != 0
    }

    /// Redraws when the percentage changes.
    func update(_ done: Int) {
        guard enabled else { return }
        let percent = min(100, done * 100 / total)
        guard percent != lastDrawn else { return }
        lastDrawn = percent
        let width = 30
        let filled = percent * width / 100
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        FileHandle.standardError.write(Data("\r\(label) [\(bar)] \(percent)%".utf8))
    }

    /// Completes the line.
    func finish() {
        guard enabled else { return }
        update(total)
        FileHandle.standardError.write(Data("\n".utf8))
    }
}
