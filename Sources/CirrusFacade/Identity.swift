// Identity — who a call is made for — and CloudKit's limits that every engine enforces.

import RecordModel

/// On whose behalf a call is made: a signed-in user (their user record name) or nobody.
///
/// ```swift
/// let alice = Identity.user("_alice")
/// let db = container.publicDatabase(as: alice)
/// ```
public enum Identity: Sendable, Hashable, CustomStringConvertible {
    /// Not signed in: may read what the world may read, never write.
    case anonymous
    /// A signed-in user, by user record name.
    case user(String)

    /// The user record name, nil when anonymous.
    public var userRecordName: String? {
        if case .user(let n) = self { return n }
        return nil
    }

    /// `user "name"` or `anonymous`, as error messages print it.
    public var description: String { userRecordName.map { "user \"\($0)\"" } ?? "anonymous" }
}

/// CloudKit's limits enforced by the façade.
public enum DatabaseLimits {
    /// Most records to save plus ids to delete in one modify call.
    public static let maximumItemsPerRequest = 400
    /// Most deleteSelf references that may point at one record.
    public static let maximumCascadingReferences = 750
    /// Default page size of change fetching.
    public static let defaultChangesPageSize = 200
}
