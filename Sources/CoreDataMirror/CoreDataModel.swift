// CoreDataModel: a Core Data managed object model as Xcode stores it — an `.xcdatamodeld`
// directory (its `.xccurrentversion` property list names the current version) holding
// `NAME.xcdatamodel/contents` XML files — read with FoundationXML's XMLParser, keeping the line of
// every element so that each problem can point into the file.
//
// Only what CloudKit mirroring looks at is kept: entities (name, parent, abstract), attributes
// (name, type, optional, default, transient, derived), relationships (name, destination, inverse,
// to-many, optional, ordered, delete rule), uniqueness constraints and configurations.

import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// An attribute of an entity.
public struct CoreDataAttribute: Sendable, Hashable {
    /// The attribute types of Core Data's model editor, as the XML spells them.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case integer16 = "Integer 16", integer32 = "Integer 32", integer64 = "Integer 64"
        case decimal = "Decimal", double = "Double", float = "Float"
        case string = "String", boolean = "Boolean", date = "Date", binary = "Binary"
        case uuid = "UUID", uri = "URI", transformable = "Transformable"
        case undefined = "Undefined", objectID = "ObjectID", composite = "Composite"
    }

    /// The attribute's name.
    public var name: String
    /// Nil when the XML names a type this reader does not know (reported as a problem).
    public var kind: Kind?
    /// The type as written in the XML.
    public var typeName: String
    /// Whether the attribute may be nil.
    public var isOptional: Bool
    /// The model's default value, if one is set (`defaultValueString` or a date default).
    public var defaultValue: String?
    /// Transient attributes are not stored, so not mirrored.
    public var isTransient: Bool
    /// Derived attributes are computed by the store from other attributes.
    public var isDerived: Bool
    /// The line of the `<attribute>` element in the model file.
    public var line: Int
}

/// A relationship of an entity.
public struct CoreDataRelationship: Sendable, Hashable {
    /// The relationship's name.
    public var name: String
    /// The entity at the other end.
    public var destination: String
    /// The name of the inverse relationship on the destination, if the model sets one.
    public var inverseName: String?
    /// Whether it holds a set of objects (else one object).
    public var isToMany: Bool
    /// Whether it may be empty / nil.
    public var isOptional: Bool
    /// Whether a to-many relationship keeps an order (mirroring refuses it).
    public var isOrdered: Bool
    /// `Nullify`, `Cascade`, `Deny` or `No Action`.
    public var deleteRule: String
    /// The line of the `<relationship>` element in the model file.
    public var line: Int
}

/// An entity of the model.
public struct CoreDataEntity: Sendable, Hashable {
    /// The entity's name.
    public var name: String
    /// The parent entity's name; nil for a root entity.
    public var parent: String?
    /// Whether the entity has no instances of its own.
    public var isAbstract: Bool
    /// Its own attributes (not the parent's), in file order.
    public var attributes: [CoreDataAttribute]
    /// Its own relationships (not the parent's), in file order.
    public var relationships: [CoreDataRelationship]
    /// Each uniqueness constraint: the attribute names that must be unique together.
    public var uniquenessConstraints: [[String]]
    /// The line of the `<entity>` element in the model file.
    public var line: Int
}

/// A named configuration: a subset of the entities, stored in one persistent store.
public struct CoreDataConfiguration: Sendable, Hashable {
    /// The configuration's name.
    public var name: String
    /// The names of its entities.
    public var entities: [String]
    /// Whether the model editor marks it as used with CloudKit.
    public var usedWithCloudKit: Bool
    /// The line of the `<configuration>` element in the model file.
    public var line: Int
}

/// A managed object model read from its XML.
public struct CoreDataModel: Sendable, Hashable {
    /// The `contents` file the model was read from.
    public var path: String
    /// Every entity, in file order.
    public var entities: [CoreDataEntity]
    /// The named configurations (the default one is not written in the file).
    public var configurations: [CoreDataConfiguration]

    /// The entity named `name`.
    public func entity(_ name: String) -> CoreDataEntity? { entities.first { $0.name == name } }

    /// The root entity of `name` (itself when it has no parent); nil for an unknown entity or a
    /// parent chain that loops.
    public func root(of name: String) -> String? {
        var current = name
        var seen: Set<String> = []
        while let e = entity(current) {
            guard let p = e.parent else { return current }
            if !seen.insert(current).inserted { return nil }
            current = p
        }
        return nil
    }

    /// Every entity whose root is `root`, the root first, then by name.
    public func family(of root: String) -> [CoreDataEntity] {
        entities.filter { self.root(of: $0.name) == root }.sorted { a, b in
            if (a.name == root) != (b.name == root) { return a.name == root }
            return a.name < b.name
        }
    }
}

/// A model that cannot be read: what and where.
public struct CoreDataModelError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file (or directory) at fault.
    public var path: String
    /// The line in it, when known.
    public var line: Int?
    /// What is wrong.
    public var message: String

    /// `path:line: message`.
    public var description: String {
        line.map { "\(path):\($0): \(message)" } ?? "\(path): \(message)"
    }
}

extension CoreDataModel {
    /// Reads a model: an `.xcdatamodeld` directory (its current version), an `.xcdatamodel`
    /// directory, or a `contents` file.
    public static func read(path: String) throws(CoreDataModelError) -> CoreDataModel {
        let contents = try contentsFile(for: path)
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: contents))
        } catch {
            throw CoreDataModelError(path: contents, message: "cannot read the file: \(error.localizedDescription)")
        }
        return try parse(data, path: contents)
    }

    /// The `contents` XML file that `path` stands for.
    static func contentsFile(for path: String) throws(CoreDataModelError) -> String {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CoreDataModelError(path: path, message: "no such file or directory")
        }
        if !isDirectory.boolValue { return path }
        let trimmed = path.hasSuffix("/") ? String(path.dropLast()) : path
        if trimmed.hasSuffix(".xcdatamodel") { return trimmed + "/contents" }
        guard trimmed.hasSuffix(".xcdatamodeld") else {
            throw CoreDataModelError(
                path: path,
                message: "not a Core Data model: expected an .xcdatamodeld or .xcdatamodel directory or a contents file"
            )
        }
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: trimmed)) ?? [])
            .filter { $0.hasSuffix(".xcdatamodel") }.sorted()
        let current = trimmed + "/.xccurrentversion"
        if FileManager.default.fileExists(atPath: current) {
            let name = try currentVersionName(current)
            guard versions.contains(name) else {
                throw CoreDataModelError(path: current, message: "names version \"\(name)\", which is not in the model")
            }
            return trimmed + "/" + name + "/contents"
        }
        guard versions.count == 1, let only = versions.first else {
            throw CoreDataModelError(
                path: trimmed,
                message: versions.isEmpty
                    ? "holds no .xcdatamodel version"
                    : "holds \(versions.count) versions and no .xccurrentversion to choose one")
        }
        return trimmed + "/" + only + "/contents"
    }

    /// `_XCCurrentVersionName` of a `.xccurrentversion` property list.
    static func currentVersionName(_ path: String) throws(CoreDataModelError) -> String {
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let plist = try PropertyListSerialization.propertyList(from: data, format: nil)
            guard let dict = plist as? [String: Any], let name = dict["_XCCurrentVersionName"] as? String else {
                throw CoreDataModelError(path: path, message: "has no _XCCurrentVersionName string")
            }
            return name
        } catch let e as CoreDataModelError {
            throw e
        } catch {
            throw CoreDataModelError(path: path, message: "is not a property list: \(error.localizedDescription)")
        }
    }

    /// Parses the XML of a `contents` file.
    public static func parse(_ data: Data, path: String) throws(CoreDataModelError) -> CoreDataModel {
        let parser = XMLParser(data: data)
        let reader = ModelXMLReader(path: path)
        parser.delegate = reader
        let ok = parser.parse()
        if let e = reader.failure { throw e }
        guard ok else {
            let message = parser.parserError.map { "\($0.localizedDescription)" } ?? "malformed XML"
            throw CoreDataModelError(path: path, line: parser.lineNumber, message: "not well-formed XML: \(message)")
        }
        if let open = reader.openElements.last {
            // FoundationXML does not always report a document cut short.
            throw CoreDataModelError(
                path: path, line: parser.lineNumber, message: "not well-formed XML: the file ends inside <\(open)>")
        }
        guard reader.sawModel else {
            throw CoreDataModelError(path: path, line: 1, message: "not a Core Data model: no <model> element")
        }
        return CoreDataModel(path: path, entities: reader.entities, configurations: reader.configurations)
    }
}

/// The XMLParser delegate that collects the model (used by one parse, on one thread).
final class ModelXMLReader: NSObject, XMLParserDelegate {
    let path: String
    var entities: [CoreDataEntity] = []
    var configurations: [CoreDataConfiguration] = []
    var failure: CoreDataModelError?
    var sawModel = false
    /// The elements started and not yet ended.
    var openElements: [String] = []
    private var entity: CoreDataEntity?
    private var configuration: CoreDataConfiguration?
    private var constraint: [String]?

    init(path: String) { self.path = path }

    private func fail(_ parser: XMLParser, _ message: String) {
        if failure == nil { failure = CoreDataModelError(path: path, line: parser.lineNumber, message: message) }
        parser.abortParsing()
    }

    private func required(_ a: [String: String], _ key: String, _ element: String, _ parser: XMLParser) -> String? {
        if let v = a[key], !v.isEmpty { return v }
        fail(parser, "<\(element)> has no \(key)")
        return nil
    }

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes a: [String: String] = [:]
    ) {
        let line = parser.lineNumber
        openElements.append(name)
        switch name {
        case "model":
            sawModel = true
        case "entity":
            guard let n = required(a, "name", name, parser) else { return }
            entity = CoreDataEntity(
                name: n, parent: a["parentEntity"], isAbstract: a["isAbstract"] == "YES", attributes: [],
                relationships: [], uniquenessConstraints: [], line: line)
        case "attribute":
            guard entity != nil, let n = required(a, "name", name, parser) else { return }
            let typeName = a["attributeType"] ?? "Undefined"
            entity?.attributes.append(
                CoreDataAttribute(
                    name: n, kind: CoreDataAttribute.Kind(rawValue: typeName), typeName: typeName,
                    isOptional: a["optional"] == "YES",
                    defaultValue: a["defaultValueString"] ?? a["defaultDateTimeInterval"],
                    isTransient: a["transient"] == "YES", isDerived: a["derived"] == "YES", line: line))
        case "relationship":
            guard entity != nil, let n = required(a, "name", name, parser),
                let destination = required(a, "destinationEntity", name, parser)
            else { return }
            entity?.relationships.append(
                CoreDataRelationship(
                    name: n, destination: destination, inverseName: a["inverseName"], isToMany: a["toMany"] == "YES",
                    isOptional: a["optional"] == "YES", isOrdered: a["ordered"] == "YES",
                    deleteRule: a["deletionRule"] ?? "Nullify", line: line))
        case "uniquenessConstraint":
            constraint = []
        case "constraint":
            if let v = a["value"] { constraint?.append(v) }
        case "configuration":
            guard let n = required(a, "name", name, parser) else { return }
            configuration = CoreDataConfiguration(
                name: n, entities: [], usedWithCloudKit: a["usedWithCloudKit"] == "YES", line: line)
        case "memberEntity":
            if let n = a["name"] { configuration?.entities.append(n) }
        default:
            break
        }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if !openElements.isEmpty { openElements.removeLast() }
        switch name {
        case "entity":
            if let e = entity { entities.append(e) }
            entity = nil
        case "uniquenessConstraint":
            if let c = constraint, !c.isEmpty { entity?.uniquenessConstraints.append(c) }
            constraint = nil
        case "configuration":
            if let c = configuration { configurations.append(c) }
            configuration = nil
        default:
            break
        }
    }
}
