// EmbeddedDatabase+Modify: saving and deleting records in batches — save policies, system fields,
// just-in-time schema (development) or the locked schema (production), grants, deleteSelf
// cascades, asset checks, quotas — and the atomicity rules of zones.
//
// A batch is planned under the container's write lock by ModifyPlanner (ModifyPlanner.swift)
// against the committed state plus the batch's own earlier items, then committed to the log as
// one batch. Atomicity: items in a custom zone succeed or fail together (the failing item gets
// its error, the others batchRequestFailed); default-zone items succeed or fail one by one and
// the result reports partialFailure. Because one item's schema extension can change whether
// another succeeds, planning repeats without the failed atomic zones until nothing changes.

import CirrusFacade
import RecordLog
import RecordModel

/// Per-item rules of one modify batch (save index → policy and merging; delete index → tag).
struct ModifyRules {
    var saves: [Int: (SavePolicy, Bool)] = [:]
    var deletes: [Int: String] = [:]
}

extension EmbeddedDatabase {
    /// Saves records and deletes ids in one request of at most 400 items (more →
    /// limitExceeded). Custom-zone items are atomic per zone when `atomically`; default-zone
    /// items are independent. Deleting a record deletes the records that reference it with
    /// deleteSelf, cascading, within the zone.
    ///
    /// ```swift
    /// let r = try await db.modifyRecords(saving: [note], deleting: [], savePolicy: .changedKeys)
    /// let saved = try r.saveResults[0].1.get()
    /// ```
    public func modifyRecords(
        saving: [Record], deleting: [RecordID], savePolicy: SavePolicy = .ifServerRecordUnchanged,
        atomically: Bool = true
    ) async throws(CirrusError) -> ModifyResult {
        try await modifyRecords(
            saving: saving, deleting: deleting, savePolicy: savePolicy, atomically: atomically, rules: ModifyRules())
    }

    func modifyRecords(
        saving: [Record], deleting: [RecordID], savePolicy: SavePolicy = .ifServerRecordUnchanged,
        atomically: Bool, rules: ModifyRules
    ) async throws(CirrusError) -> ModifyResult {
        try Self.checkCancelled()
        try checkDatabaseAccess()
        let n = saving.count + deleting.count
        if n > DatabaseLimits.maximumItemsPerRequest {
            throw CirrusError(
                .limitExceeded, "\(n) items in one request; the limit is \(DatabaseLimits.maximumItemsPerRequest)")
        }
        if n == 0 { return ModifyResult(saveResults: [], deleteResults: []) }
        if identity.userRecordName == nil {
            throw CirrusError(.notAuthenticated, "saving and deleting records needs a signed-in user")
        }
        if core.options.readOnly { throw CirrusError(.internalError, "the container is open read-only") }
        return try core.withWriteLock { () throws(CirrusError) in
            modifyLocked(
                saving: saving, deleting: deleting, savePolicy: savePolicy, atomically: atomically, rules: rules)
        }
    }

    /// Saves and deletes in one request where each item has its own rule — the operation types of
    /// CloudKit Web Services' `records/modify` (create, update, forceUpdate, replace, forceReplace,
    /// delete, forceDelete). Same limits, atomicity and checks as `modifyRecords`; the results are in
    /// the order of `operations` (a deletion's record is nil).
    ///
    /// ```swift
    /// let results = try await db.modify([
    ///     .save(edited, .ifServerRecordUnchanged, mergingFields: true),   // update
    ///     .delete(old.recordID, ifChangeTag: old.recordChangeTag),          // delete
    /// ])
    /// ```
    public func modify(
        _ operations: [RecordOperation], atomically: Bool = true
    ) async throws(CirrusError) -> [(RecordID, Result<Record?, CirrusError>)] {
        var saving: [Record] = []
        var deleting: [RecordID] = []
        var rules = ModifyRules()
        var order: [(save: Bool, index: Int)] = []
        for op in operations {
            switch op {
            case .save(let r, let policy, let merging):
                rules.saves[saving.count] = (policy, merging)
                order.append((true, saving.count))
                saving.append(r)
            case .delete(let id, let tag):
                if let tag { rules.deletes[deleting.count] = tag }
                order.append((false, deleting.count))
                deleting.append(id)
            }
        }
        let r = try await modifyRecords(saving: saving, deleting: deleting, atomically: atomically, rules: rules)
        return order.map { o in
            if o.save {
                let (id, result) = r.saveResults[o.index]
                return (id, result.map { Optional($0) })
            }
            let (id, result) = r.deleteResults[o.index]
            return (id, result.map { nil })
        }
    }

    /// The body of `modifyRecords`, write lock held.
    func modifyLocked(
        saving: [Record], deleting: [RecordID], savePolicy: SavePolicy, atomically: Bool, rules: ModifyRules = .init()
    ) -> ModifyResult {
        var excluded = Set<String>()
        var firstErrors: [Int: CirrusError] = [:]
        var plan: ModifyPlanner
        var rounds = 0
        while true {
            plan = ModifyPlanner(database: self, policy: savePolicy, excludedZones: excluded)
            plan.savePolicies = rules.saves
            plan.deleteTags = rules.deletes
            plan.run(saving: saving, deleting: deleting)
            for (i, r) in plan.outcomes.enumerated() {
                if case .failure(let e) = r, firstErrors[i] == nil { firstErrors[i] = e }
            }
            rounds += 1
            guard atomically else { break }
            let failedZones = Set(
                plan.outcomes.indices.compactMap { i -> String? in
                    guard case .failure = plan.outcomes[i], let z = plan.zoneOf[i], z != ZoneID.defaultZoneName else {
                        return nil
                    }
                    return z
                }
            ).subtracting(excluded)
            if failedZones.isEmpty || rounds > 8 { break }
            excluded.formUnion(failedZones)
        }
        // Items of a failed atomic zone: their own first error, or batchRequestFailed.
        for i in plan.outcomes.indices {
            guard let z = plan.zoneOf[i], excluded.contains(z) else { continue }
            if let e = firstErrors[i], e.code != .batchRequestFailed {
                plan.outcomes[i] = .failure(e)
            } else {
                let id = i < saving.count ? saving[i].recordID : deleting[i - saving.count]
                plan.outcomes[i] = .failure(
                    .record(
                        .batchRequestFailed, id,
                        "another item of this atomic zone batch failed; nothing in zone \"\(z)\" was saved"))
            }
        }
        do throws(CirrusError) {
            try core.commitHoldingLock(
                plan.operations, changes: plan.changes, newSchema: plan.schemaChanged ? plan.schema : nil)
        } catch {
            // Only the items that were going to succeed get the commit's error.
            for i in plan.outcomes.indices where (try? plan.outcomes[i].get()) != nil {
                var e = error
                e.recordID = i < saving.count ? saving[i].recordID : deleting[i - saving.count]
                plan.outcomes[i] = .failure(e)
            }
        }
        var result = ModifyResult(saveResults: [], deleteResults: [])
        for (i, r) in saving.enumerated() { result.saveResults.append((r.recordID, plan.outcomes[i])) }
        for (j, id) in deleting.enumerated() {
            result.deleteResults.append((id, plan.outcomes[saving.count + j].map { _ in () }))
        }
        return result
    }
}
