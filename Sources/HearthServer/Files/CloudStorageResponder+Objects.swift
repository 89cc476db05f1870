import Foundation
import HearthFiles
import HTTPTypes
import Hummingbird

extension CloudStorageResponder {
    // MARK: - Buckets

    func bucket(_ call: Call) async throws -> Response {
        Self.json(CloudBucketResource(name: call.bucket, base: call.base, created: clock()))
    }

    /// The project's bucket and every bucket that holds objects (Hearth has one project, so
    /// `project=` changes nothing).
    func buckets(_ call: Call) async throws -> Response {
        let names = Set(try await store.buckets()).union([defaultBucket]).sorted()
        let now = clock()
        return Self.json(BucketList(items: names.map { CloudBucketResource(name: $0, base: call.base, created: now) }))
    }

    struct BucketList: Encodable {
        let kind = "storage#buckets"
        let items: [CloudBucketResource]
    }

    // MARK: - Reading

    func list(_ call: Call) async throws -> Response {
        let parameters = call.parameters
        guard parameters["matchGlob"] == nil else { throw FilesError.badRequest("matchGlob is not supported.") }
        var maxResults = 1000
        if let text = parameters["maxResults"] {
            guard let value = Int(text), value > 0 else { throw FilesError.badRequest("Invalid value for maxResults: \(text.debugDescription).") }
            // A bound, not a demand: Cloud Storage gives at most 1000 a page whatever is asked.
            maxResults = min(value, 1000)
        }
        let listing = try await store.list(
            bucket: call.bucket, prefix: parameters["prefix"] ?? "", delimiter: parameters["delimiter"].flatMap { $0.isEmpty ? nil : $0 },
            pageToken: parameters["pageToken"].flatMap { $0.isEmpty ? nil : $0 }, maxResults: maxResults,
            startOffset: parameters["startOffset"], endOffset: parameters["endOffset"])
        return Self.json(ObjectList(
            items: listing.items.map { CloudObjectResource($0, base: call.base) }, prefixes: listing.prefixes,
            nextPageToken: listing.nextPageToken))
    }

    struct ObjectList: Encodable {
        let kind = "storage#objects"
        let items: [CloudObjectResource]
        let prefixes: [String]
        let nextPageToken: String?
    }

    func get(_ call: Call, onAppOrigin: Bool) async throws -> Response {
        let object = try await existing(call, name: try call.name(), generation: call.parameters["generation"])
        try Self.preconditions(call.parameters).check(object)
        guard call.parameters["alt"] == "media" else { return Self.resource(object, call) }
        return try await media(object, call, onAppOrigin: onAppOrigin)
    }

    /// `/download/storage/v1/…`: the content, whatever `alt` says.
    func download(_ call: Call, onAppOrigin: Bool) async throws -> Response {
        let object = try await existing(call, name: try call.name(), generation: call.parameters["generation"])
        try Self.preconditions(call.parameters).check(object)
        return try await media(object, call, onAppOrigin: onAppOrigin)
    }

    /// The content with the headers google-cloud-storage reads: the generation (it pins a
    /// resumed download to it) and the checksums (it checks a whole download against them).
    private func media(_ object: StoredObject, _ call: Call, onAppOrigin: Bool) async throws -> Response {
        var headers = HTTPFields()
        headers[.googGeneration] = String(object.generation)
        headers[.googMetageneration] = String(object.metageneration)
        headers[.googHash] = [object.crc32c.map { "crc32c=\($0)" }, "md5=\(object.md5Hash)"].compactMap { $0 }.joined(separator: ",")
        headers[.googStoredContentLength] = String(object.size)
        headers[.googStoredContentEncoding] = object.contentEncoding ?? "identity"
        return try await ObjectDownload.response(object, store: store, request: call.request, onAppOrigin: onAppOrigin, headers: headers)
    }

    // MARK: - Metadata

    /// `PATCH` sets the properties the body names (null deletes one; custom metadata is merged);
    /// `PUT` (`replacing`) makes the body the whole metadata: what it leaves out is deleted.
    func updateMetadata(_ call: Call, replacing: Bool) async throws -> Response {
        let name = try call.name()
        let body = try await FilesResponder.collect(call.request.body, limit: FilesResponder.maxMetadataBytes)
        var fields = try FilesResponder.fields(fromJSON: body)
        if let type = fields.contentType { _ = try ObjectName.validatedContentType(type) }
        let preconditions = try Self.preconditions(call.parameters)
        let current = try await existing(call, name: name, generation: call.parameters["generation"])
        if Self.setsNull("metadata", in: body) {
            // `"metadata": null` deletes every custom key (download tokens too, as in Cloud Storage).
            var custom = fields.customMetadata ?? [:]
            for key in current.customMetadata.keys where custom[key] == nil { custom[key] = .some(nil) }
            custom[FilesResponder.downloadTokensKey] = .some(nil)
            fields.customMetadata = custom
        }
        if replacing {
            // Absent is deleted, as null is.
            fields.contentType = fields.contentType ?? FileStore.defaultContentType
            fields.cacheControl = fields.cacheControl ?? ""
            fields.contentDisposition = fields.contentDisposition ?? ""
            fields.contentEncoding = fields.contentEncoding ?? ""
            fields.contentLanguage = fields.contentLanguage ?? ""
            var custom = fields.customMetadata ?? [:]
            for key in current.customMetadata.keys where custom[key] == nil { custom[key] = .some(nil) }
            if custom[FilesResponder.downloadTokensKey] == nil { custom[FilesResponder.downloadTokensKey] = .some(nil) }
            fields.customMetadata = custom
        }
        let tokens = FilesResponder.takeDownloadTokens(from: &fields)
        let pinned = call.parameters["generation"].flatMap { Int64($0) }
        let object = try await store.updateMetadata(bucket: call.bucket, name: name, fields: fields, downloadTokens: tokens) {
            updated, existing in
            // Checked against the object as the update finds it: newer content is another generation.
            if let pinned, pinned != updated.generation { throw Self.noSuchObject(updated.bucket, updated.name) }
            try preconditions.check(existing)
        }
        return Self.resource(object, call)
    }

    /// True when the JSON object in `body` sets `key` to null.
    static func setsNull(_ key: String, in body: [UInt8]) -> Bool {
        guard let json = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else { return false }
        return json[key] is NSNull
    }

    func delete(_ call: Call) async throws -> Response {
        let name = try call.name()
        let preconditions = try Self.preconditions(call.parameters)
        let generation = try call.parameters["generation"].map { text throws(FilesError) in
            guard let value = Int64(text) else { throw FilesError.badRequest("Invalid value for generation: \(text.debugDescription).") }
            return value
        }
        do {
            try await store.delete(bucket: call.bucket, name: name) { existing in
                if let generation, generation != existing.generation { throw Self.noSuchObject(existing.bucket, existing.name) }
                try preconditions.check(existing)
            }
        } catch let error as FilesError where error.kind == .notFound {
            throw Self.noSuchObject(call.bucket, name)
        }
        return Response(status: .noContent)
    }

    // MARK: - Copies

    /// `copyTo` and `rewriteTo`: the source's content as a new object, with the source's
    /// metadata but for what the body sets. A rewrite is always done in one call.
    func copy(_ call: Call, rewrite: Bool) async throws -> Response {
        if rewrite, call.parameters["rewriteToken"] != nil {
            throw FilesError.badRequest("Invalid rewrite token: Hearth finishes every rewrite in one call.")
        }
        let destinationBucket = try call.destinationBucket()
        let destinationName = try call.name("destinationObject")
        let body = try await FilesResponder.collect(call.request.body, limit: FilesResponder.maxMetadataBytes)
        let overrides = try FilesResponder.fields(fromJSON: body)
        let preconditions = try Self.preconditions(call.parameters)
        let sourcePreconditions = try Self.preconditions(call.parameters, source: true)
        let source = try await existing(call, name: try call.name(), generation: call.parameters["sourceGeneration"])
        try sourcePreconditions.check(source)
        var fields = Self.fields(of: source)
        fields.contentType = overrides.contentType ?? fields.contentType
        fields.cacheControl = overrides.cacheControl ?? fields.cacheControl
        fields.contentDisposition = overrides.contentDisposition ?? fields.contentDisposition
        fields.contentEncoding = overrides.contentEncoding ?? fields.contentEncoding
        fields.contentLanguage = overrides.contentLanguage ?? fields.contentLanguage
        // Custom metadata in the body replaces the source's, as in Cloud Storage.
        if let custom = overrides.customMetadata { fields.customMetadata = custom }
        fields.downloadTokens = FilesResponder.takeDownloadTokens(from: &fields)
        let object = try await store.copy(
            source, bucket: destinationBucket, name: destinationName, fields: fields, authorize: Self.writeCheck(preconditions))
        guard rewrite else { return Self.resource(object, call) }
        return Self.json(RewriteAnswer(
            totalBytesRewritten: String(object.size), objectSize: String(object.size),
            resource: CloudObjectResource(object, base: call.base)))
    }

    struct RewriteAnswer: Encodable {
        let kind = "storage#rewriteResponse"
        let totalBytesRewritten: String
        let objectSize: String
        let done = true
        let resource: CloudObjectResource
    }

    /// `compose`: the named objects of the bucket, one after the other, as a new object with
    /// the body's `destination` metadata (the first source's content type if it gives none).
    func compose(_ call: Call) async throws -> Response {
        let name = try call.name()
        let body = try await FilesResponder.collect(call.request.body, limit: FilesResponder.maxMetadataBytes)
        guard let json = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let entries = json["sourceObjects"] as? [[String: Any]]
        else { throw FilesError.badRequest("A compose needs sourceObjects.") }
        guard (1...FileStore.maxComposeSources).contains(entries.count) else {
            throw FilesError.badRequest("A compose takes 1 to \(FileStore.maxComposeSources) source objects.")
        }
        var fields = ObjectFields()
        if let destination = json["destination"] {
            guard let object = destination as? [String: Any], let bytes = try? JSONSerialization.data(withJSONObject: object) else {
                throw FilesError.badRequest("destination must be an object.")
            }
            fields = try FilesResponder.fields(fromJSON: Array(bytes))
        }
        let preconditions = try Self.preconditions(call.parameters)
        var sources: [StoredObject] = []
        for entry in entries {
            guard let sourceName = entry["name"] as? String else { throw FilesError.badRequest("Each source object needs a name.") }
            let generation = try Self.number(entry["generation"], "generation")
            let source = try await existing(call, name: sourceName, generation: generation.map(String.init))
            let conditions = entry["objectPreconditions"] as? [String: Any]
            if let wanted = try Self.number(conditions?["ifGenerationMatch"], "ifGenerationMatch"), wanted != source.generation {
                throw FilesError.conditionNotMet
            }
            sources.append(source)
        }
        fields.contentType = fields.contentType ?? sources[0].contentType
        fields.downloadTokens = FilesResponder.takeDownloadTokens(from: &fields)
        let object = try await store.compose(
            sources, bucket: call.bucket, name: name, fields: fields, authorize: Self.writeCheck(preconditions))
        return Self.resource(object, call)
    }

    /// A JSON number, or a string of digits as Google writes 64-bit numbers.
    static func number(_ value: Any?, _ name: String) throws(FilesError) -> Int64? {
        switch value {
        case nil, is NSNull: return nil
        case let text as String:
            guard let number = Int64(text) else { throw .badRequest("Invalid value for \(name): \(text.debugDescription).") }
            return number
        case let number as NSNumber:
            guard let exact = Int64(exactly: number.doubleValue) else { throw .badRequest("Invalid value for \(name).") }
            return exact
        default:
            throw .badRequest("Invalid value for \(name).")
        }
    }

    /// The metadata a copy of `object` starts from.
    static func fields(of object: StoredObject) -> ObjectFields {
        ObjectFields(
            contentType: object.contentType, cacheControl: object.cacheControl, contentDisposition: object.contentDisposition,
            contentEncoding: object.contentEncoding, contentLanguage: object.contentLanguage,
            customMetadata: object.customMetadata.mapValues { Optional($0) })
    }
}

extension HTTPField.Name {
    static let googGeneration = Self("X-Goog-Generation")!
    static let googMetageneration = Self("X-Goog-Metageneration")!
    static let googHash = Self("X-Goog-Hash")!
    static let googStoredContentLength = Self("X-Goog-Stored-Content-Length")!
    static let googStoredContentEncoding = Self("X-Goog-Stored-Content-Encoding")!
}
