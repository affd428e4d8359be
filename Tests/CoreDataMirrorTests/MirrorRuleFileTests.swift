// One model file per mirroring rule, invalid and valid (Models/Rules): the invalid file breaks
// only that rule, on the lines marked `<!-- breaks the rule -->`; the valid file is the nearest
// model that keeps it (the fix Apple's guide suggests: an inverse, Nullify, optional or a default,
// one configuration, …) and has no problem at all.

import Foundation
import Testing

@testable import CoreDataMirror

private let rules = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("Models/Rules").path

@Suite struct MirrorRuleFileTests {
    static let cases: [(file: String, rule: MirrorProblem.Rule)] = [
        ("uniqueConstraint", .uniqueConstraint),
        ("undefinedAttribute", .unsupportedAttributeType),
        ("objectIDAttribute", .unsupportedAttributeType),
        ("nonOptionalRelationship", .nonOptionalRelationship),
        ("missingInverse", .missingInverse),
        ("denyDeleteRule", .denyDeleteRule),
        ("orderedRelationship", .orderedRelationship),
        ("nonOptionalAttributeWithoutDefault", .nonOptionalAttributeWithoutDefault),
        ("crossConfigurationRelationship", .crossConfigurationRelationship),
    ]

    @Test func everyRuleHasItsFiles() {
        let covered = Set(Self.cases.map(\.rule))
        #expect(covered == Set(MirrorProblem.Rule.allCases).subtracting([.unknownEntity]))
    }

    @Test(arguments: cases)
    func theInvalidFileBreaksOnlyItsRuleWhereMarked(_ c: (file: String, rule: MirrorProblem.Rule)) throws {
        let path = rules + "/\(c.file).invalid.xcdatamodel"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let marked = text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            .filter { $0.element.contains("<!-- breaks the rule -->") }.map { $0.offset + 1 }
        let problems = CloudKitMirror.problems(in: try CoreDataModel.read(path: path))
        #expect(!problems.isEmpty, "\(c.file)")
        #expect(problems.allSatisfy { $0.rule == c.rule }, "\(c.file): \(problems)")
        #expect(problems.map(\.line).sorted() == marked, "\(c.file): \(problems)")
        // Apple's wording (an inverse naming a missing relationship has Cirrus's own sentence).
        #expect(problems.contains { $0.message.hasPrefix("CloudKit integration") }, "\(c.file)")
    }

    @Test(arguments: cases.map(\.file))
    func theValidFileHasNoProblem(_ file: String) throws {
        let m = try CoreDataModel.read(path: rules + "/\(file).valid.xcdatamodel")
        #expect(CloudKitMirror.problems(in: m).isEmpty, "\(file): \(CloudKitMirror.problems(in: m))")
        #expect(m.entities.count == 2)
    }
}
