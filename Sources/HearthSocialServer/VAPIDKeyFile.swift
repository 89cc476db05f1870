import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where Hearth keeps its VAPID key (``VAPIDKey``): one file, made on first use and read on every
/// start after, because browsers subscribe with the key's public half and a new key would leave
/// every subscription unusable.
///
/// The file holds ``VAPIDKey/rawBase64URL`` and a newline, readable and writable by its owner
/// only (0600). It is created whole or not at all (written beside it, then linked into place), so
/// a crash never leaves half a key, and of two processes creating it at once both end up with
/// the one key that landed. A file that is there but does not hold a key, or that others may
/// read, is an error: replacing it would silently cut off every subscribed browser.
public struct VAPIDKeyFile: Sendable {
    /// The key file.
    public let url: URL

    /// The key file at `url`; its folder must exist.
    public init(url: URL) {
        self.url = url
    }

    /// The key in the file, or a new key (`makeKey`'s) kept there when there is no file yet.
    ///
    /// - Throws: ``Problem`` when the file is malformed, open to others, or cannot be read or
    ///   created.
    public func loadOrCreate(makeKey: () -> VAPIDKey = { VAPIDKey() }) throws(Problem) -> VAPIDKey {
        if let key = try load() { return key }
        let key = makeKey()
        // Another process may create the file between the two steps; then its key is the one.
        // (Tried a few times in case that file is removed again meanwhile.)
        for _ in 0..<3 {
            if try create(key) { return key }
            if let kept = try load() { return kept }
        }
        throw Problem.cannotCreate(path: url.path, reason: "it keeps appearing and disappearing")
    }

    /// The key in the file, or nil when there is no file.
    ///
    /// - Throws: ``Problem`` when the file is malformed, open to others, or cannot be read.
    public func load() throws(Problem) -> VAPIDKey? {
        let path = url.path
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 {
            if errno == ENOENT { return nil }
            throw Problem.unreadable(path: path, reason: Self.lastError())
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw Problem.unreadable(path: path, reason: Self.lastError()) }
        guard status.st_mode & S_IFMT == S_IFREG else { throw Problem.malformed(path: path) }
        // Like ssh with its private keys: a key others could read may be in their hands already.
        guard status.st_mode & 0o077 == 0 else { throw Problem.tooOpen(path: path, mode: Int(status.st_mode & 0o777)) }

        // A key is 43 characters; anything much longer is not one (and is not read whole).
        var bytes = [UInt8](repeating: 0, count: 256)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { buffer in
                read(descriptor, buffer.baseAddress! + count, buffer.count - count)
            }
            if got < 0 {
                if errno == EINTR { continue }
                throw Problem.unreadable(path: path, reason: Self.lastError())
            }
            if got == 0 { break }
            count += got
        }
        guard count < bytes.count else { throw Problem.malformed(path: path) }
        let text = String(decoding: bytes.prefix(count), as: UTF8.self)
        let line = text.hasSuffix("\r\n") ? text.dropLast(2) : text.hasSuffix("\n") ? text.dropLast(1) : Substring(text)
        guard !line.isEmpty, !line.contains(where: \.isWhitespace), let key = try? VAPIDKey(rawBase64URL: String(line))
        else { throw Problem.malformed(path: path) }
        return key
    }

    /// Writes `key` to a file of its own beside ``url`` and links it into place; false when
    /// a file is there already (left as it is).
    func create(_ key: VAPIDKey) throws(Problem) -> Bool {
        let path = url.path
        let folder = url.deletingLastPathComponent().path
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(getpid()).\(UInt64.random(in: 0 ... .max)).tmp").path
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Problem.cannotCreate(path: path, reason: Self.lastError()) }
        defer { unlink(temporary) }
        do {
            defer { close(descriptor) }
            // The umask can take bits away from 0600 (even the owner's); make it exactly 0600.
            guard fchmod(descriptor, 0o600) == 0 else { throw Problem.cannotCreate(path: path, reason: Self.lastError()) }
            var bytes = Array((key.rawBase64URL + "\n").utf8)[...]
            while !bytes.isEmpty {
                let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress!, $0.count) }
                if written < 0 {
                    if errno == EINTR { continue }
                    throw Problem.cannotCreate(path: path, reason: Self.lastError())
                }
                bytes = bytes.dropFirst(written)
            }
            // On disk before it has its name: a crash must not leave an empty key file.
            guard fsync(descriptor) == 0 else { throw Problem.cannotCreate(path: path, reason: Self.lastError()) }
        }
        // link, not rename: rename would replace a key another process has just put there (and
        // is already using); link fails instead, and that process's key is read.
        if link(temporary, path) != 0 {
            if errno == EEXIST { return false }
            throw Problem.cannotCreate(path: path, reason: Self.lastError())
        }
        // The new name on disk too.
        let directory = open(folder, O_RDONLY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
        return true
    }

    static func lastError() -> String { String(cString: strerror(errno)) }

    /// Why the key file cannot be used.
    public enum Problem: Error, Hashable, CustomStringConvertible {
        /// The file does not hold a key (one line: the private key's 32 bytes, base64url).
        case malformed(path: String)
        /// Others than its owner may read or write the file (its mode given).
        case tooOpen(path: String, mode: Int)
        /// The file is there but cannot be read (the system's reason).
        case unreadable(path: String, reason: String)
        /// The file could not be created (the system's reason).
        case cannotCreate(path: String, reason: String)

        public var description: String {
            switch self {
            case .malformed(let path):
                "\(path) does not hold a VAPID key (one line: the private key's 32 bytes, base64url); "
                    + "restore it, or move it away to have a new key made (browsers then need to subscribe again)"
            case .tooOpen(let path, let mode):
                "\(path) may be read by others (mode \(String(mode, radix: 8))); make it the owner's only: chmod 600 \(path)"
            case .unreadable(let path, let reason): "cannot read the VAPID key file \(path): \(reason)"
            case .cannotCreate(let path, let reason): "cannot create the VAPID key file \(path): \(reason)"
            }
        }
    }
}

