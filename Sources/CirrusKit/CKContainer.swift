// CKContainer: a container and its databases. The backend — an embedded container directory or
// a Web Services server — comes from the environment (CirrusConfiguration.fromEnvironment) or
// from a configuration given in code; it is made on first use, so that making a container never
// fails (as in CloudKit) and a failure to open it is the error of each call.

import Cirrus
import RecordModel

/// Whether the user has an iCloud account.
public enum CKAccountStatus: Int, Sendable, Hashable {
    /// Cirrus could not tell.
    case couldNotDetermine = 0
    /// A user is signed in.
    case available = 1
    /// Parental controls or device management restrict access (never reported by Cirrus).
    case restricted = 2
    /// No user: private databases refuse every call.
    case noAccount = 3
    /// The account is temporarily unavailable.
    case temporarilyUnavailable = 4
}

/// A container: its public database and the current user's private database.
///
/// ```swift
/// let container = CKContainer(identifier: "iCloud.com.example.notes")
/// guard try await container.accountStatus() == .available else { return }
/// let notes = container.privateCloudDatabase
/// ```
open class CKContainer: NSObject, @unchecked Sendable {
    // @unchecked: every stored member is a `let`; the backend is made once under `lock`.
    /// The container's identifier, e.g. `iCloud.com.example.notes`.
    public let containerIdentifier: String?
    let configuration: CirrusConfiguration
    private let lock = NSLock()
    nonisolated(unsafe) private var madeBackend: (any ContainerBackend)?

    /// The container `containerIdentifier`, configured from the environment variables.
    public convenience init(identifier containerIdentifier: String) {
        self.init(identifier: containerIdentifier, configuration: .fromEnvironment())
    }

    /// The container `containerIdentifier`, reached as `configuration` says (CirrusKit's
    /// addition, for tests and servers).
    public init(identifier containerIdentifier: String, configuration: CirrusConfiguration) {
        self.containerIdentifier = containerIdentifier
        self.configuration = configuration
        super.init()
    }

    /// The default container: `$CIRRUS_CONTAINER`, else `iCloud.local.cirrus` (what `cirrus
    /// serve` serves by default), configured from the environment variables. Each call reads
    /// the environment afresh; containers of one directory share one open store.
    open class func `default`() -> CKContainer {
        let env = ProcessInfo.processInfo.environment
        let id = env["CIRRUS_CONTAINER"].flatMap { $0.isEmpty ? nil : $0 } ?? "iCloud.local.cirrus"
        return CKContainer(identifier: id, configuration: .fromEnvironment(env))
    }

    /// The backend, made on first use.
    var backend: any ContainerBackend {
        lock.lock()
        defer { lock.unlock() }
        if let b = madeBackend { return b }
        let b = configuration.makeBackend(identifier: containerIdentifier ?? "")
        madeBackend = b
        return b
    }

    /// The public database: everyone reads it; writing needs an account.
    public var publicCloudDatabase: CKDatabase { CKDatabase(container: self, scope: .public) }
    /// The current user's private database.
    public var privateCloudDatabase: CKDatabase { CKDatabase(container: self, scope: .private) }
    /// The shared database (every call fails: Cirrus does not model sharing).
    public var sharedCloudDatabase: CKDatabase { CKDatabase(container: self, scope: .shared) }

    /// The database with `databaseScope`.
    public func database(with databaseScope: CKDatabase.Scope) -> CKDatabase {
        CKDatabase(container: self, scope: databaseScope)
    }

    /// Whether there is a signed-in user: `.available` with one, `.noAccount` without
    /// (embedded: `CIRRUS_USER` unset; remote: no web auth token), `.couldNotDetermine` when
    /// the backend cannot be reached.
    public func accountStatus() async throws -> CKAccountStatus {
        try await backend.accountStatus()
    }

    /// `accountStatus()`, calling `completionHandler` when done.
    public func accountStatus(completionHandler: @escaping (CKAccountStatus, (any Error)?) -> Void) {
        let handler = UncheckedSendable(completionHandler)
        Task {
            do {
                handler.value(try await accountStatus(), nil)
            } catch {
                handler.value(.couldNotDetermine, error)
            }
        }
    }

    /// The current user's record id (`_alice` …); notAuthenticated without an account.
    public func userRecordID() async throws -> CKRecord.ID {
        CKRecord.ID(recordName: try await backend.userRecordName())
    }

    /// `userRecordID()`, calling `completionHandler` when done.
    public func fetchUserRecordID(completionHandler: @escaping (CKRecord.ID?, (any Error)?) -> Void) {
        let handler = UncheckedSendable(completionHandler)
        Task {
            do {
                handler.value(try await userRecordID(), nil)
            } catch {
                handler.value(nil, error)
            }
        }
    }

    /// The user with `email` who agreed to be found, nil when there is none.
    public func userIdentity(forEmailAddress email: String) async throws -> CKUserIdentity? {
        try await backend.discover(.emailAddress(email)).map(CKUserIdentity.init)
    }

    /// The user with `userRecordID` who agreed to be found, nil when there is none.
    public func userIdentity(forUserRecordID userRecordID: CKRecord.ID) async throws -> CKUserIdentity? {
        try await backend.discover(.userRecordName(userRecordID.recordName)).map(CKUserIdentity.init)
    }

    /// Runs `operation` against this container (a database operation without a database runs
    /// against the private database).
    public func add(_ operation: CKOperation) {
        if let op = operation as? CKDatabaseOperation, op.database == nil { op.database = privateCloudDatabase }
        CKDatabase.operationQueue.addOperation(operation)
    }
}

/// A user another user may find (one who agreed to be discoverable).
public final class CKUserIdentity: NSObject, @unchecked Sendable {
    // @unchecked: every stored member is a `let`.
    /// The user's record id.
    public let userRecordID: CKRecord.ID?
    /// The user's name, when the container knows it.
    public let nameComponents: PersonNameComponents?
    /// Whether the user has an iCloud account (always true for a found user).
    public let hasiCloudAccount: Bool = true

    init(_ u: FoundUser) {
        userRecordID = CKRecord.ID(recordName: u.userRecordName)
        var name = PersonNameComponents()
        name.givenName = u.givenName
        name.familyName = u.familyName
        nameComponents = (u.givenName ?? u.familyName) == nil ? nil : name
        super.init()
    }
}

/// A value the compiler may send between tasks: the closures handed to CirrusKit's
/// completion-handler methods, which Apple's API does not require to be `@Sendable`; they are
/// called once, from the task that ran the work.
struct UncheckedSendable<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
