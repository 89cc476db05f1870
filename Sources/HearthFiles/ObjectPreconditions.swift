/// Cloud Storage's conditions on an object's version (`ifGenerationMatch`,
/// `ifGenerationNotMatch`, `ifMetagenerationMatch`, `ifMetagenerationNotMatch`): a request
/// carrying them changes the object only while they hold. Generation 0 stands for "no object",
/// so `ifGenerationMatch=0` creates only where nothing is.
///
/// Checked inside the store's read-modify-write (metadata updates, deletes) or at the commit
/// of new content (uploads, copies), against the object as it is then.
public struct ObjectPreconditions: Sendable, Equatable {
    public var ifGenerationMatch: Int64?
    public var ifGenerationNotMatch: Int64?
    public var ifMetagenerationMatch: Int64?
    public var ifMetagenerationNotMatch: Int64?

    public init(
        ifGenerationMatch: Int64? = nil, ifGenerationNotMatch: Int64? = nil, ifMetagenerationMatch: Int64? = nil,
        ifMetagenerationNotMatch: Int64? = nil
    ) {
        self.ifGenerationMatch = ifGenerationMatch
        self.ifGenerationNotMatch = ifGenerationNotMatch
        self.ifMetagenerationMatch = ifMetagenerationMatch
        self.ifMetagenerationNotMatch = ifMetagenerationNotMatch
    }

    /// True when no condition is set.
    public var isEmpty: Bool { self == ObjectPreconditions() }

    /// Throws unless every condition holds for `existing` (nil: there is no object).
    /// - Throws: ``FilesError/conditionNotMet`` (412).
    public func check(_ existing: StoredObject?) throws(FilesError) {
        let generation = existing?.generation ?? 0
        if let wanted = ifGenerationMatch, wanted != generation { throw .conditionNotMet }
        if let refused = ifGenerationNotMatch, refused == generation { throw .conditionNotMet }
        // A metageneration condition on an object that does not exist cannot hold.
        if let wanted = ifMetagenerationMatch, existing?.metageneration != wanted { throw .conditionNotMet }
        if let refused = ifMetagenerationNotMatch, let existing, existing.metageneration == refused { throw .conditionNotMet }
    }
}
