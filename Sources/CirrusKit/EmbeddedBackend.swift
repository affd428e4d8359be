// The embedded backend: CKContainer(identifier:) opens the container directory
// `$CIRRUS_CONTAINERS/<identifier>` with Cirrus's façade and every database call goes to its
// `Database`, on behalf of the configured user. A process opens each directory once
// (`EmbeddedContainers`): the store holds a lock on it, and CloudKit lets code make
// `CKContainer(identifier:)` as often as it likes.

import Cirrus
import RecordModel

/// The containers this process has opened, by directory and environment. The one piece of
/// process-wide state CirrusKit keeps: `CKContainer(identifier:)` may be called any number of
/// times and must reach the same open store. Guarded by `lock`; containers stay open until
/// the process ends (CloudKit has no way to close one).
enum EmbeddedContainers {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var open: [String: Container] = [:]

    /// The open container of `directory` in `environment`, opening (and creating) it the
    /// first time.
    static func container(
        directory: String, environment: Environment, options: ContainerOptions
    ) throws(CKError)
        -> Container
    {
        lock.lock()
        defer { lock.unlock() }
        let key = "\(environment.rawValue):\(directory)"
        if let c = open[key] { return c }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw CKError(.internalError, "cannot create the container directory \(directory): \(error)")
        }
        do throws(CirrusError) {
            let c = try Container.open(at: directory, environment: environment, options: options)
            open[key] = c
            return c
        } catch {
            throw CKError(.internalError, "cannot open the container at \(directory): \(error.message)")
        }
    }
}

/// A container opened in this process.
struct EmbeddedContainer: ContainerBackend {
    let container: Container
    let user: String?

    func database(_ scope: CKDatabase.Scope) -> any DatabaseBackend {
        switch scope {
        case .public:
            return EmbeddedDatabase(db: container.publicDatabase(as: user.map { .user($0) } ?? .anonymous))
        case .private:
            guard let user else {
                return FailingBackend(
                    error: CKError(
                        .notAuthenticated,
                        "no iCloud account: the private database needs a user (set CIRRUS_USER, or "
                            + "CirrusConfiguration.user)"))
            }
            return EmbeddedDatabase(db: container.privateDatabase(for: user))
        case .shared:
            return FailingBackend(error: CKError(.badDatabase, "the shared database is not supported by Cirrus"))
        }
    }

    func accountStatus() async throws(CKError) -> CKAccountStatus {
        user == nil ? .noAccount : .available
    }

    func userRecordName() async throws(CKError) -> String {
        guard let user else { throw CKError(.notAuthenticated, "no iCloud account (set CIRRUS_USER)") }
        return user
    }

    func discover(_ lookup: UserLookupInfo) async throws(CKError) -> FoundUser? {
        do throws(CirrusError) {
            return try container.publicDatabase(as: user.map { .user($0) } ?? .anonymous)
                .discoverUserIdentities([lookup]).first.map {
                    FoundUser(
                        userRecordName: $0.userRecordName, givenName: $0.name.givenName, familyName: $0.name.familyName)
                }
        } catch {
            throw CKError(error)
        }
    }
}

/// One database of an embedded container.
struct EmbeddedDatabase: DatabaseBackend {
    let db: Database

    func records(
        for ids: [RecordID], desiredKeys: [String]?
    ) async throws(CKError) -> [(
        RecordID, Result<Record, CKError>
    )] {
        do throws(CirrusError) {
            return try await db.records(for: ids).map {
                ($0.0, $0.1.map { $0.projected(to: desiredKeys) }.mapError(CKError.init))
            }
        } catch {
            throw CKError(error)
        }
    }

    func modify(
        _ operations: [RecordOperation], atomically: Bool
    ) async throws(CKError) -> [(
        RecordID, Result<Record?, CKError>
    )] {
        do throws(CirrusError) {
            return try await db.modify(operations, atomically: atomically).map { ($0.0, $0.1.mapError(CKError.init)) }
        } catch {
            throw CKError(error)
        }
    }

    func query(_ q: RecordQuery, zone: ZoneID?, desiredKeys: [String]?, limit: Int) async throws(CKError) -> QueryPage {
        do throws(CirrusError) {
            let r = try await db.records(matching: q, inZoneWith: zone, desiredKeys: desiredKeys, resultsLimit: limit)
            return QueryPage(
                matches: r.matchResults.map { ($0.0, $0.1.mapError(CKError.init)) },
                cursor: r.queryCursor.map { CKQueryCursor(marker: db.token(for: $0), query: q, zoneID: zone) })
        } catch {
            throw CKError(error)
        }
    }

    func query(
        continuing cursor: CKQueryCursor, desiredKeys: [String]?, limit: Int
    ) async throws(CKError)
        -> QueryPage
    {
        do throws(CirrusError) {
            let c = try db.cursor(fromToken: cursor.marker)
            let r = try await db.records(continuingMatchFrom: c, desiredKeys: desiredKeys, resultsLimit: limit)
            return QueryPage(
                matches: r.matchResults.map { ($0.0, $0.1.mapError(CKError.init)) },
                cursor: r.queryCursor.map {
                    CKQueryCursor(marker: db.token(for: $0), query: cursor.query, zoneID: cursor.zoneID)
                })
        } catch {
            throw CKError(error)
        }
    }

    func allZones() async throws(CKError) -> [ZoneID] {
        do throws(CirrusError) { return try await db.allZones() } catch { throw CKError(error) }
    }

    func modifyZones(
        saving: [ZoneID], deleting: [ZoneID]
    ) async throws(CKError) -> (
        saved: [(ZoneID, Result<ZoneID, CKError>)], deleted: [(ZoneID, Result<Void, CKError>)]
    ) {
        var saved: [(ZoneID, Result<ZoneID, CKError>)] = []
        for z in saving {
            do throws(CirrusError) {
                saved.append((z, .success(try await db.save(zone: z))))
            } catch {
                saved.append((z, .failure(CKError(error))))
            }
        }
        var deleted: [(ZoneID, Result<Void, CKError>)] = []
        for z in deleting {
            do throws(CirrusError) {
                try await db.deleteZone(z)
                deleted.append((z, .success(())))
            } catch {
                deleted.append((z, .failure(CKError(error))))
            }
        }
        return (saved, deleted)
    }

    func zoneChanges(_ zone: ZoneID, since token: Data?, limit: Int?) async throws(CKError) -> ZoneChangePage {
        do throws(CirrusError) {
            let page = try await db.changes(
                in: zone, since: token.map { ChangeToken(data: Array($0)) },
                limit: limit ?? DatabaseLimits.defaultChangesPageSize)
            return ZoneChangePage(
                changed: page.changed, deleted: page.deleted.map { ($0.0, $0.recordType) },
                token: Data(page.token.data), moreComing: page.moreComing)
        } catch {
            throw CKError(error)
        }
    }

    func databaseChanges(since token: Data?, limit: Int?) async throws(CKError) -> DatabaseChangePage {
        do throws(CirrusError) {
            let page = try await db.databaseChanges(
                since: token.map { DatabaseChangeToken(data: Array($0)) },
                limit: limit ?? DatabaseLimits.defaultChangesPageSize)
            return DatabaseChangePage(
                changed: page.changed, deleted: page.deleted, token: Data(page.token.data), moreComing: page.moreComing)
        } catch {
            throw CKError(error)
        }
    }

    func save(_ subscription: Subscription) async throws(CKError) -> Subscription {
        do throws(CirrusError) { return try await db.save(subscription) } catch { throw CKError(error) }
    }

    func deleteSubscription(_ id: String) async throws(CKError) {
        do throws(CirrusError) { try await db.deleteSubscription(withID: id) } catch { throw CKError(error) }
    }

    func allSubscriptions() async throws(CKError) -> [Subscription] {
        do throws(CirrusError) { return try await db.allSubscriptions() } catch { throw CKError(error) }
    }

    func storeAsset(
        _ bytes: [UInt8], record: RecordID, recordType: String, field: String
    ) async throws(CKError)
        -> Asset
    {
        do throws(CirrusError) { return try await db.storeAsset(bytes) } catch { throw CKError(error) }
    }

    func assetFile(_ asset: Asset, of record: RecordID) async -> URL? {
        guard let bytes = try? await db.assetData(asset, of: record) else { return nil }
        return try? CKAsset.localFile(for: asset, bytes: bytes)
    }
}
