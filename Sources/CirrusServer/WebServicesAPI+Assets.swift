// Assets: CloudKit Web Services' three-step upload and the download of asset URLs.
//
//   1. POST …/assets/upload  {"tokens": [{"recordType": "Photo", "fieldName": "image", "recordName"?: "p1"}]}
//                          → {"tokens": [{"recordName": "p1", "fieldName": "image", "url": "http://HOST/…/assets/put"}]}
//   2. POST <url> with the file's bytes as the body
//                          → {"singleFile": {"fileChecksum": "<sha256>", "size": 1234, "receipt": "<sha256>"}}
//   3. records/modify with the field {"value": <singleFile>, "type": "ASSETID"}
//
// URLs are absolute when the request had a Host header. Records in every answer carry, for each
// asset, a `downloadURL`:
//   GET …/assets/download?recordName=p1&fileChecksum=<sha256>&size=1234[&zoneName=Z] → the bytes.
//
// Unlike CloudKit's pre-signed URLs, both URLs take the same authentication as every other request
// (ckAPIToken and ckWebAuthToken, or a signature): a URL never carries a credential, and a download
// goes through the façade's read check of the record, so no one reads an asset of a record they
// may not read. Assets are content-addressed (the receipt is the checksum); an upload no record
// refers to is removed at the next open.

import Cirrus
import Foundation
import RecordModel

extension WebServicesAPI {
    /// The operation a client posts an asset's bytes to.
    static let assetPutOperation = "assets/put"
    /// The operation that answers an asset's bytes.
    static let assetDownloadOperation = "assets/download"

    func assetUploadURLs(_ body: JSONBody, base: String) throws(WebServicesError) -> JSONValue {
        var out: [JSONValue] = []
        for t in try body["tokens"].array(limit: limits.maximumOperations) {
            _ = try t["recordType"].string()
            let field = try t["fieldName"].string()
            let name = try t["recordName"].optionalString() ?? UUID().uuidString
            out.append(
                .object([
                    ("recordName", .string(name)), ("fieldName", .string(field)),
                    ("url", .string(base + "/" + Self.assetPutOperation)),
                ]))
        }
        if out.isEmpty { throw body["tokens"].fail("no tokens requested") }
        return .object([("tokens", .array(out))])
    }

    func storeAsset(_ bytes: [UInt8], db: Database) async throws(WebServicesError) -> JSONValue {
        guard bytes.count <= limits.maximumAssetBytes else {
            throw WebServicesError(
                .quotaExceeded, "the asset has \(bytes.count) bytes; the limit is \(limits.maximumAssetBytes)")
        }
        do throws(CirrusError) {
            let asset = try await db.storeAsset(bytes)
            return .object([
                (
                    "singleFile",
                    .object([
                        ("fileChecksum", .string(asset.contentHash)), ("size", .integer(asset.size)),
                        ("receipt", .string(asset.contentHash)),
                    ])
                )
            ])
        } catch {
            throw WebServicesError(error)
        }
    }

    func downloadAsset(_ query: [String: String], db: Database) async throws(WebServicesError) -> WebResponse {
        func parameter(_ name: String) throws(WebServicesError) -> String {
            guard let v = query[name], !v.isEmpty else {
                throw WebServicesError(.badRequest, "\(name): missing query parameter")
            }
            return v
        }
        let name = try parameter("recordName")
        let hash = try parameter("fileChecksum")
        guard let size = Int64(try parameter("size")), size >= 0 else {
            throw WebServicesError(.badRequest, "size: not a byte count")
        }
        let zone = query["zoneName"].map { ZoneID(zoneName: $0) } ?? .default
        do throws(CirrusError) {
            let bytes = try await db.assetData(
                Asset(contentHash: hash, size: size), of: RecordID(recordName: name, zoneID: zone))
            return WebResponse(bytes: bytes, contentType: "application/octet-stream")
        } catch {
            throw WebServicesError(error)
        }
    }

    /// The answer with a `downloadURL` beside every asset value of every record in it.
    /// Whether an answer has a field of an ASSETID type anywhere (then it needs download URLs).
    static func hasAssets(_ json: JSONValue) -> Bool {
        switch json {
        case .array(let items): return items.contains(where: hasAssets)
        case .object(let members):
            for (key, value) in members {
                if key == "type", case .string(let t) = value, t.hasPrefix("ASSETID") { return true }
                if hasAssets(value) { return true }
            }
            return false
        default: return false
        }
    }

    static func addingDownloadURLs(_ json: JSONValue, base: String) -> JSONValue {
        switch json {
        case .array(let items): return .array(items.map { addingDownloadURLs($0, base: base) })
        case .object(let members):
            guard let name = json["recordName"]?.stringValue, case .object(let fields)? = json["fields"] else {
                return .object(members.map { ($0.0, addingDownloadURLs($0.1, base: base)) })
            }
            let zone = json["zoneID"]?["zoneName"]?.stringValue
            func url(_ asset: JSONValue) -> JSONValue {
                guard case .object(var m) = asset, let hash = asset["fileChecksum"]?.stringValue,
                    let size = asset["size"]?.int64Value
                else { return asset }
                var q = "recordName=\(percentEncoded(name))&fileChecksum=\(hash)&size=\(size)"
                if let zone, zone != ZoneID.default.zoneName { q += "&zoneName=\(percentEncoded(zone))" }
                m.append(("downloadURL", .string("\(base)/\(assetDownloadOperation)?\(q)")))
                return .object(m)
            }
            let withURLs: [(String, JSONValue)] = fields.map { key, field in
                guard case .object(var f) = field, let type = field["type"]?.stringValue, type.hasPrefix("ASSETID"),
                    let i = f.firstIndex(where: { $0.0 == "value" })
                else { return (key, field) }
                switch f[i].1 {
                case .array(let list): f[i].1 = .array(list.map(url))
                default: f[i].1 = url(f[i].1)
                }
                return (key, .object(f))
            }
            return .object(members.map { $0.0 == "fields" ? ("fields", .object(withURLs)) : $0 })
        default: return json
        }
    }

    static func percentEncoded(_ s: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return s.addingPercentEncoding(withAllowedCharacters: allowed) ?? s
    }
}
