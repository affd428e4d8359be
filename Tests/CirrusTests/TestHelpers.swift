// Helpers for the Cirrus tests: containers on an in-memory file system with a fixed clock and
// seeded randomness, and short record constructors.

import Foundation
import RecordLog
import RecordModel

@testable import Cirrus

/// A clock tests can set and advance.
final class TestClock: LogClock, @unchecked Sendable {
    private let lock = NSLock()
    private var ms: Int64

    init(_ ms: Int64 = 1_700_000_000_000) { self.ms = ms }

    func wallMilliseconds() -> Int64 { lock.withLock { ms } }
    func monotonicNanoseconds() -> UInt64 { lock.withLock { UInt64(ms) * 1_000_000 } }
    func advance(_ by: Int64 = 1000) { lock.withLock { ms += by } }
}

/// A container directory on an in-memory file system, reopenable.
struct TestEnv {
    let fs = InMemoryFileSystem()
    let clock = TestClock()
    let dir = "/c"
    var seed: UInt64 = 1
    /// Delta size that triggers a checkpoint (model tests use tiny ones).
    var checkpointThreshold = 50_000

    func options(readOnly: Bool = false, quota: Int? = nil) -> ContainerOptions {
        ContainerOptions(
            fileSystem: fs, clock: clock, random: SeededRandomSource(seed: seed), durability: .none, readOnly: readOnly,
            maximumRecordsPerDatabase: quota, indexNodeSize: 4, checkpointThreshold: checkpointThreshold)
    }

    func open(_ env: Environment = .development, quota: Int? = nil) throws -> Container {
        try Container.open(at: dir, environment: env, options: options(quota: quota))
    }
}

func rec(
    _ name: String, _ type: String = "Note", zone: ZoneID = .default, _ fields: [String: FieldValue] = [:]
) -> Record {
    Record(recordType: type, recordID: RecordID(recordName: name, zoneID: zone), fields: fields)
}

func rec(_ name: String, zone: ZoneID = .default, _ fields: [String: FieldValue]) -> Record {
    Record(recordType: "Note", recordID: RecordID(recordName: name, zoneID: zone), fields: fields)
}

func rid(_ name: String, zone: ZoneID = .default) -> RecordID { RecordID(recordName: name, zoneID: zone) }

/// The code of the error `body` throws, nil if it does not throw.
func code<T>(_ body: () async throws -> T) async -> CirrusError.Code? {
    do {
        _ = try await body()
        return nil
    } catch let e as CirrusError {
        return e.code
    } catch {
        return .internalError
    }
}

/// The error `body` throws, nil if it does not throw.
func caught<T>(_ body: () async throws -> T) async -> CirrusError? {
    do {
        _ = try await body()
        return nil
    } catch let e as CirrusError {
        return e
    } catch {
        return CirrusError(.internalError, "\(error)")
    }
}

/// `body`'s value or its CirrusError (avoids a typed-throws do/catch in async code, which
/// crashes this compiler).
func attempt<T>(_ body: () async throws -> T) async -> Result<T, CirrusError> {
    do {
        return .success(try await body())
    } catch let e as CirrusError {
        return .failure(e)
    } catch {
        return .failure(CirrusError(.internalError, "\(error)"))
    }
}
