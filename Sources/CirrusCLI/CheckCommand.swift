// `cirrus check`: does CloudKit accept this predicate, and what does it mean?

import ArgumentParser
import CirrusShell
import Foundation
import QueryChecker
import RecordModel

extension Environment: ExpressibleByArgument {}

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a predicate exactly as CloudKit's CKQuery would.",
        discussion: """
            Prints `accepted`, the canonical form and the Web Services filters — or the error with a \
            caret under the offending part and a hint. Exit status: 0 accepted, 1 rejected, 2 usage.

            An ARG is a Web Services field value as JSON, e.g. '{"type": "STRING", "value": "cafe"}', \
            '{"type": "LOCATION", "value": {"latitude": 48.85, "longitude": 2.29}}', or \
            '{"type": "KEY", "value": "kind"}' for %K. A bare JSON string, number or array is a value \
            of the obvious type.

            Examples:
              cirrus check "kind == %@ AND population > 100000" --arg '"city"'
              cirrus check "name CONTAINS 'caf'" --schema schema.ckdb --type Place
              cirrus check --jsonl predicates.jsonl
            """)

    @Argument(help: "The predicate format string.")
    var predicate: String?

    @Option(
        name: .customLong("arg"),
        help: ArgumentHelp("An argument for the next placeholder, as JSON.", valueName: "JSON"))
    var arguments: [String] = []

    @Option(name: .customLong("var"), help: ArgumentHelp("A $variable binding: NAME=JSON.", valueName: "NAME=JSON"))
    var variables: [String] = []

    @Option(help: ArgumentHelp("A schema in CloudKit's schema language (cktool export-schema).", valueName: "FILE"))
    var schema: String?

    @Option(
        name: .customLong("type"),
        help: ArgumentHelp("The record type the predicate queries (with --schema).", valueName: "TYPE"))
    var recordType: String?

    @Option(help: "The schema's environment: production enforces index options exactly.")
    var environment: Environment = .production

    @Option(
        help: ArgumentHelp(
            "Check each line of FILE ('-' for standard input): {\"predicate\": …, \"args\": […]}.", valueName: "FILE"))
    var jsonl: String?

    @Flag(help: "Print the verdict as a JSON object.")
    var json = false

    func validate() throws {
        if (predicate == nil) == (jsonl == nil) {
            throw ValidationError("give either a PREDICATE or --jsonl FILE")
        }
        if jsonl != nil && !arguments.isEmpty {
            throw ValidationError("--arg applies to a single predicate; with --jsonl put \"args\" on each line")
        }
    }

    func run() throws {
        var context = CheckContext(now: Timestamp(Date()))
        do throws(ShellError) {
            if let path = schema {
                let s = try SchemaFile.load(path: path, environment: environment)
                context.schema = s
                context.recordType = try SchemaFile.recordType(recordType, in: s)
            }
        } catch {
            printError("cirrus check: \(error.message)")
            throw ExitCode(2)
        }
        do {
            for a in arguments { context.arguments.append(try PredicateArgument(argumentJSON: a)) }
            for v in variables {
                guard let eq = v.firstIndex(of: "=") else { throw ArgumentError("--var takes NAME=JSON, got \(v)") }
                context.variables[String(v[..<eq])] = try PredicateArgument(
                    argumentJSON: String(v[v.index(after: eq)...]))
            }
        } catch let error as ArgumentError {
            printError("cirrus check: \(error.message)")
            throw ExitCode(2)
        }

        if let path = jsonl {
            try runLines(path, context)
            return
        }
        let report = CheckReport(predicate: predicate ?? "", context: context)
        print(json ? report.json.jsonText : report.text, terminator: json ? "\n" : "")
        if !report.isAccepted { throw ExitCode(1) }
    }

    private func runLines(_ path: String, _ context: CheckContext) throws {
        var number = 0
        func handle(_ line: String) {
            number += 1
            if let out = CheckJSONLines.check(line: line, number: number, base: context) { print(out.jsonText) }
        }
        if path == "-" {
            while let line = readLine(strippingNewline: true) { handle(line) }
        } else {
            guard let data = FileManager.default.contents(atPath: path) else {
                printError("cirrus: cannot read \(path)")
                throw ExitCode(2)
            }
            String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).forEach {
                handle(String($0))
            }
        }
    }
}
