import Foundation

/// One page of a bucket's listing.
public struct ObjectListing: Sendable, Equatable {
    /// "Folders": the distinct name prefixes up to and including the next delimiter.
    public var prefixes: [String] = []
    /// The objects directly at the listed level (all below the prefix, without a delimiter).
    public var items: [StoredObject] = []
    /// Where the next page starts, or nil when this is the last.
    public var nextPageToken: String?
}

extension FileStore {
    /// The objects of `bucket` whose names start with `prefix`, in name order (UTF-8 bytes), at
    /// most `maxResults` entries (items and prefixes together) per page.
    ///
    /// With `delimiter` "/", names with a further "/" after the prefix are rolled up into
    /// ``ObjectListing/prefixes`` (`alice/` for `alice/full/p1.jpg`), as Cloud Storage does.
    /// `startOffset` and `endOffset` narrow the listing to names from the one (inclusive) up
    /// to the other (exclusive), as Cloud Storage's JSON API does.
    public func list(
        bucket: String, prefix: String = "", delimiter: String? = nil, pageToken: String? = nil, maxResults: Int = 1000,
        startOffset: String? = nil, endOffset: String? = nil
    ) async throws -> ObjectListing {
        guard (1...1000).contains(maxResults) else { throw FilesError.badRequest("maxResults must be between 1 and 1000.") }
        guard delimiter == nil || delimiter == "/" else { throw FilesError.badRequest("Only \"/\" is supported as a delimiter.") }
        // Names compare by their UTF-8 bytes, as the metadata stores order them.
        func precedes(_ left: String, _ right: String) -> Bool { left.utf8.lexicographicallyPrecedes(right.utf8) }
        let lower = startOffset.map { precedes(prefix, $0) ? $0 : prefix } ?? prefix
        var upper = Self.successor(of: prefix)
        if let endOffset, upper.map({ precedes(endOffset, $0) }) ?? true { upper = endOffset }
        var cursor = try pageToken.map(Cursor.init(token:)) ?? Cursor(after: nil, from: lower)
        var listing = ObjectListing()
        do {
            while listing.prefixes.count + listing.items.count < maxResults {
                let wanted = maxResults - listing.prefixes.count - listing.items.count
                let rows = try await metadata.objects(
                    bucket: bucket, after: cursor.after, from: cursor.from, before: upper, limit: wanted + 1)
                if rows.isEmpty {
                    cursor.exhausted = true
                    break
                }
                var skipped = false
                for object in rows {
                    if listing.prefixes.count + listing.items.count == maxResults { break }
                    let rest = object.name.utf8.dropFirst(prefix.utf8.count)
                    if delimiter != nil, let slash = rest.firstIndex(of: UInt8(ascii: "/")) {
                        // Roll everything under this "folder" into one prefix and jump past it.
                        let folder = String(decoding: object.name.utf8[..<object.name.utf8.index(after: slash)], as: UTF8.self)
                        listing.prefixes.append(folder)
                        cursor = Cursor(after: nil, from: Self.successor(of: folder) ?? folder)
                        skipped = true
                        break
                    }
                    listing.items.append(object)
                    cursor = Cursor(after: object.name, from: "")
                }
                if !skipped && rows.count <= wanted {
                    cursor.exhausted = true
                    break
                }
            }
            if !cursor.exhausted { listing.nextPageToken = try cursor.token() }
            // A page that ended exactly at the end of the listing has no next page.
            if listing.nextPageToken != nil,
                try await metadata.objects(bucket: bucket, after: cursor.after, from: cursor.from, before: upper, limit: 1).isEmpty
            {
                listing.nextPageToken = nil
            }
            return listing
        }
    }

    /// Where a listing goes on: after an item's name, or from a name on (past a rolled-up prefix).
    struct Cursor: Codable {
        var after: String?
        var from: String
        var exhausted = false

        init(after: String?, from: String) {
            self.after = after
            self.from = from
        }

        init(token: String) throws {
            var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while base64.count % 4 != 0 { base64 += "=" }
            guard let data = Data(base64Encoded: base64), let cursor = try? JSONDecoder().decode(Cursor.self, from: data) else {
                throw FilesError.badRequest("Invalid page token.")
            }
            self = cursor
        }

        func token() throws -> String {
            try JSONEncoder().encode(self).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
    }

    /// The least string after every string that starts with `prefix` (nil for the empty
    /// prefix): its last scalar moved up by one. UTF-8 byte order is scalar order, so names in
    /// `[prefix, successor)` are exactly those starting with `prefix`.
    static func successor(of prefix: String) -> String? {
        var scalars = Array(prefix.unicodeScalars)
        while let last = scalars.popLast() {
            var next = last.value + 1
            if next == 0xD800 { next = 0xE000 }
            if let scalar = Unicode.Scalar(next) {
                scalars.append(scalar)
                var result = ""
                result.unicodeScalars.append(contentsOf: scalars)
                return result
            }
        }
        return nil
    }
}
