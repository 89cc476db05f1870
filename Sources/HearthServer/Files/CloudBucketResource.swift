import HearthFiles
/// A bucket as Cloud Storage's JSON API writes it (`storage#bucket`). Hearth's buckets are
/// names its file store uses, not resources with settings: every valid name is a bucket.
struct CloudBucketResource: Encodable {
    let kind = "storage#bucket"
    let id: String
    let name: String
    let selfLink: String
    let projectNumber = "0"
    let metageneration = "1"
    let location = "US"
    let locationType = "multi-region"
    let storageClass = "STANDARD"
    let etag = "CAE="
    let timeCreated: String
    let updated: String

    /// The bucket `name` as seen from `base`; `created` in milliseconds since the epoch.
    init(name: String, base: String, created: Int64) {
        id = name
        self.name = name
        selfLink = "\(base)/storage/v1/b/\(CloudObjectResource.encoded(name))"
        timeCreated = ObjectResource.timestamp(created)
        updated = timeCreated
    }
}
