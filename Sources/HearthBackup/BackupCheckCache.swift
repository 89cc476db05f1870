import Foundation
import Synchronization

/// Remembers which backups were checked against their manifest, so listing a folder of large
/// backups does not read every byte of them each time: a backup is checked again when any of
/// its files changes size or modification time (or appears or goes).
///
/// Threading: a lock guards the remembered results.
public final class BackupCheckCache: Sendable {
    /// A cache with nothing checked yet; keep one for as long as the catalog is asked again and again.
    public init() {}

    private let results = Mutex<[String: (signature: String, problem: String?)]>([:])

    /// The outcome of checking the backup at `url`: nil when it is whole, else the problem.
    func problem(of url: URL, check: () throws -> Void) -> String? {
        let signature = Self.signature(of: url)
        if let known = results.withLock({ $0[url.path] }), known.signature == signature { return known.problem }
        var problem: String?
        do {
            try check()
        } catch {
            problem = "\(error)"
        }
        results.withLock { $0[url.path] = (signature, problem) }
        return problem
    }

    /// Every file's path, size and modification time, in one string.
    static func signature(of url: URL) -> String {
        let keys: [URLResourceKey] = [.fileSizeKey, .contentModificationDateKey, .isRegularFileKey]
        guard let enumerator = FileManager.default.enumerator(at: url, includingPropertiesForKeys: keys) else { return "" }
        var parts: [String] = []
        for case let file as URL in enumerator {
            guard let values = try? file.resourceValues(forKeys: Set(keys)), values.isRegularFile == true else { continue }
            let time = values.contentModificationDate?.timeIntervalSince1970 ?? 0
            parts.append("\(file.path)|\(values.fileSize ?? -1)|\(time)")
        }
        return parts.sorted().joined(separator: "\n")
    }
}
