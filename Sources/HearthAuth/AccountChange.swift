import Foundation

/// What using an action code does to the accounts, written by the store in the transaction that
/// uses the code up (see ``AccountStorage/consumeActionCode(digest:now:account:apply:)``). A
/// value rather than a callback into the transaction, so that a store whose transactions are
/// asynchronous (PostgreSQL) and one whose are not (SQLite) apply it alike.
public struct AccountChange: Sendable {
    /// The account a use reads, locked until its transaction ends.
    public enum Lookup: Sendable, Equatable {
        case uid(String)
        /// By address, compared as given (the service passes lower-cased addresses).
        case email(String)
    }

    /// A code to record, as ``AccountStorage/addActionCode(digest:_:listed:)`` does.
    public struct NewActionCode: Sendable {
        public var digest: Data
        public var code: ActionCode
        public var listed: (code: String, link: String)?

        public init(digest: Data, code: ActionCode, listed: (code: String, link: String)? = nil) {
            self.digest = digest
            self.code = code
            self.listed = listed
        }
    }

    /// The account to write: inserted when ``isNew``, otherwise updated (uniqueness checked).
    public var user: UserRecord?
    public var isNew = false
    /// Revokes every session of ``user`` (at the use's time).
    public var revokesSessions = false
    /// Forgets every other code made for ``user`` (after a reset or an email change).
    public var deletesActionCodes = false
    /// Recorded after the codes above are forgotten (an email change's recovery code).
    public var newActionCode: NewActionCode?

    public init(
        user: UserRecord? = nil, isNew: Bool = false, revokesSessions: Bool = false, deletesActionCodes: Bool = false,
        newActionCode: NewActionCode? = nil
    ) {
        self.user = user
        self.isNew = isNew
        self.revokesSessions = revokesSessions
        self.deletesActionCodes = deletesActionCodes
        self.newActionCode = newActionCode
    }
}
