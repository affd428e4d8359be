// The values alone, no backend: NSPredicate(format:) and NSSortDescriptor(key:ascending:) on
// Linux and their translation; CKRecord's subscripts, changed keys and system-field archiving;
// CKError's codes; CLLocation.

import CirrusKit
import Foundation
import Testing

@testable import CirrusKit

@Suite struct ValueTests {
    @Test func formatPredicatesKeepTheirFormatAndArguments() throws {
        let ref = CKRecord.Reference(recordID: CKRecord.ID(recordName: "folder"), action: .deleteSelf)
        let p = NSPredicate(
            format: "title == %@ AND priority > %d AND folder == %@ AND %K BEGINSWITH %@", "a", 3, ref, "name", "x")
        let q = CKQuery(recordType: "Note", predicate: p)
        q.sortDescriptors = [NSSortDescriptor(key: "title", ascending: false)]
        let rq = try q.recordQuery()
        #expect(rq.predicate == "title == %@ AND priority > %d AND folder == %@ AND %K BEGINSWITH %@")
        #expect(rq.arguments.count == 5)
        #expect(rq.arguments[0] == .value(.string("a")))
        #expect(rq.arguments[1] == .value(.int64(3)))
        #expect(rq.arguments[3] == .key("name"))
        #expect(rq.sortDescriptors == [.field("title", ascending: false)])
    }

    @Test func compoundAndValuePredicatesFlatten() throws {
        let both = NSCompoundPredicate(andPredicateWithSubpredicates: [
            NSPredicate(format: "a == %@", "x"), NSPredicate(value: true),
            NSPredicate(format: "recordID == %@", CKRecord.ID(recordName: "r")),
        ])
        let rq = try CKQuery(recordType: "T", predicate: both).recordQuery()
        #expect(rq.predicate == "(a == %@) AND (TRUEPREDICATE) AND (recordName == %@)")
        #expect(rq.arguments.count == 2)
        let never = try CKQuery(recordType: "T", predicate: NSPredicate(value: false)).recordQuery()
        #expect(never.predicate == "FALSEPREDICATE")
        // recordID inside quotes or after a dot is left alone.
        let quoted = try CKQuery(recordType: "T", predicate: NSPredicate(format: "a == 'recordID' AND b.recordID == 1"))
            .recordQuery()
        #expect(quoted.predicate == "a == 'recordID' AND b.recordID == 1")
    }

    @Test func blockPredicatesAndKeyPathSortsAreRefused() {
        let block = NSPredicate { _, _ in true }
        #expect(throws: CKError.self) { try CKQuery(recordType: "T", predicate: block).recordQuery() }
        let q = CKQuery(recordType: "T", predicate: NSPredicate(value: true))
        q.sortDescriptors = [NSSortDescriptor(keyPath: \CKRecordZone.zoneID.zoneName, ascending: true)]
        #expect(throws: CKError.self) { try q.recordQuery() }
        let nilArgument: String? = nil
        #expect(throws: CKError.self) {
            try CKQuery(recordType: "T", predicate: NSPredicate(format: "a == %@", nilArgument as Any)).recordQuery()
        }
    }

    @Test func recordSubscriptsReadBackInCloudKitsForms() {
        let r = CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "n"))
        r["i"] = 42
        r["i8"] = Int8(-3)
        r["u"] = UInt32(7)
        r["d"] = 2.5
        r["f"] = Float(1.5)
        r["b"] = true
        r["s"] = "text"
        r["date"] = Date(timeIntervalSince1970: 12.345)
        r["data"] = Data([1, 2, 3])
        r["loc"] = CLLocation(latitude: 1, longitude: 2)
        r["ref"] = CKRecord.Reference(recordID: CKRecord.ID(recordName: "other"), action: .none)
        r["list"] = [1, 2, 3]
        #expect(r["i"] as? Int == 42)
        #expect(r["i"] as? Int64 == 42)
        #expect(r["i8"] as? Int == -3)
        #expect(r["u"] as? Int == 7)
        #expect(r["d"] as? Double == 2.5)
        #expect(r["f"] as? Double == 1.5)
        #expect(r["b"] as? Bool == true)
        let typed: Bool? = r["b"]
        #expect(typed == true)
        let count: Int? = r["i"]
        #expect(count == 42)
        #expect(r["s"] as? String == "text")
        // Dates keep milliseconds; Date itself holds seconds since 2001 in a Double.
        #expect(abs(((r["date"] as? Date)?.timeIntervalSince1970 ?? 0) - 12.345) < 1e-6)
        #expect(r["data"] as? Data == Data([1, 2, 3]))
        #expect((r["loc"] as? CLLocation)?.coordinate.longitude == 2)
        #expect((r["ref"] as? CKRecord.Reference)?.recordID.recordName == "other")
        #expect(r["list"] as? [Int] == [1, 2, 3])
        #expect(r.changedKeys().count == 12)
        r["s"] = nil
        #expect(r["s"] == nil)
        #expect(!r.allKeys().contains("s"))
        #expect(r.changedKeys().contains("s"))
    }

    @Test func keyValueCodingSpellings() {
        let r = CKRecord(recordType: "Note")
        r.setValue("kvc", forKey: "title")
        r.setValue(7, forKey: "n")
        #expect(r.value(forKey: "title") as? String == "kvc")
        #expect(r.value(forKey: "n") as? Int == 7)
        r.setValue(nil, forKey: "n")
        #expect(r.value(forKey: "n") == nil)
        r.setValue(URL(fileURLWithPath: "/"), forKey: "url")
        #expect(throws: CKError.self) {
            try r.cirrusRecord(asset: { (_) throws(CKError) in throw CKError(.internalError) })
        }
    }

    @Test func unsupportedValuesFailTheSaveNotTheProcess() {
        let r = CKRecord(recordType: "Note")
        r["nested"] = [[1], [2]]
        #expect(throws: CKError.self) {
            try r.cirrusRecord(asset: { (_) throws(CKError) in throw CKError(.internalError) })
        }
        r["nested"] = nil
        r["nan"] = Double.nan
        #expect(throws: CKError.self) {
            try r.cirrusRecord(asset: { (_) throws(CKError) in throw CKError(.internalError) })
        }
    }

    @Test func systemFieldsArchiveAndRestore() throws {
        let r = CKRecord(
            recordType: "Note", recordID: CKRecord.ID(recordName: "n1", zoneID: CKRecordZone.ID(zoneName: "Z")))
        r["title"] = "kept in the full archive only"
        let coder = NSKeyedArchiver(requiringSecureCoding: true)
        r.encodeSystemFields(with: coder)
        coder.finishEncoding()
        let un = try NSKeyedUnarchiver(forReadingFrom: coder.encodedData)
        un.requiresSecureCoding = true
        let back = try #require(CKRecord(coder: un))
        #expect(back.recordID == r.recordID)
        #expect(back.recordType == "Note")
        #expect(back["title"] == nil)
        let full = try NSKeyedArchiver.archivedData(withRootObject: r, requiringSecureCoding: true)
        let whole = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: CKRecord.self, from: full))
        #expect(whole["title"] as? String == "kept in the full archive only")
    }

    @Test func cursorsAndTokensArchive() throws {
        let here = CLLocation(latitude: 48.8583, longitude: 2.3375)
        let query = CKQuery(
            recordType: "Place", predicate: NSPredicate(format: "kind == %@ AND %K IN %@", "cafe", "tag", ["a", "b"]))
        query.sortDescriptors = [CKLocationSortDescriptor(key: "location", relativeLocation: here)]
        let cursor = CKQueryCursor(
            marker: "opaque-marker", query: try query.recordQuery(), zoneID: CKRecordZone.ID(zoneName: "Z").cirrus)
        let data = try NSKeyedArchiver.archivedData(withRootObject: cursor, requiringSecureCoding: true)
        let back = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: CKQueryCursor.self, from: data))
        #expect(back == cursor)
        #expect(back.query == cursor.query)
        #expect(back.zoneID == cursor.zoneID)
        // Bytes that are not an archive are an error, not a crash.
        #expect(throws: (any Error).self) {
            _ = try NSKeyedUnarchiver.unarchivedObject(ofClass: CKServerChangeToken.self, from: Data("junk".utf8))
        }
    }

    @Test func errorCodesAreApples() {
        let expected: [(CKError.Code, Int)] = [
            (.internalError, 1), (.partialFailure, 2), (.networkUnavailable, 3), (.notAuthenticated, 9),
            (.permissionFailure, 10), (.unknownItem, 11), (.invalidArguments, 12), (.serverRecordChanged, 14),
            (.serverRejectedRequest, 15), (.constraintViolation, 19), (.operationCancelled, 20),
            (.changeTokenExpired, 21), (.batchRequestFailed, 22), (.zoneBusy, 23), (.badDatabase, 24),
            (.quotaExceeded, 25), (.zoneNotFound, 26), (.limitExceeded, 27), (.referenceViolation, 31),
            (.accountTemporarilyUnavailable, 36),
        ]
        for (code, raw) in expected { #expect(code.rawValue == raw) }
        let e = CKError(.requestRateLimited, userInfo: [CKErrorRetryAfterKey: 2.5])
        #expect(e.retryAfterSeconds == 2.5)
        #expect((e as NSError).domain == CKErrorDomain)
        #expect((e as NSError).code == 7)
        let matched: Bool
        do { throw CKError(.unknownItem) } catch CKError.unknownItem { matched = true } catch { matched = false }
        #expect(matched)
    }

    @Test func locationDistanceIsGreatCircle() {
        let paris = CLLocation(latitude: 48.8566, longitude: 2.3522)
        let london = CLLocation(latitude: 51.5074, longitude: -0.1278)
        // Haversine on the mean sphere: 343.5 km (CoreLocation's ellipsoid gives about 343.9).
        #expect(abs(paris.distance(from: london) - 343_556) < 500)
        #expect(paris.distance(from: paris) == 0)
        #expect(paris.description.hasPrefix("<+48.85660000,+2.35220000> +/- 0.00m"))
        #expect(CLLocationCoordinate2DIsValid(paris.coordinate))
        #expect(!CLLocationCoordinate2DIsValid(kCLLocationCoordinate2DInvalid))
    }
}
