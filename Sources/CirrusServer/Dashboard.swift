// Dashboard: the static files of the web dashboard (Sources/CirrusServer/Dashboard/, shipped as
// the module's resources), served at `/` and `/dashboard/{file}`. Nothing is generated or fetched
// from elsewhere: plain HTML, CSS and ES modules talking to the same HTTP API as any client.
// Only the names listed here are served; the container identifier is put into index.html so the
// page knows which paths to call.

import Foundation
import Hummingbird

/// The dashboard's files.
enum Dashboard {
    /// Served names and their content types.
    static let files: [String: String] = [
        "index.html": "text/html; charset=utf-8",
        "dashboard.css": "text/css; charset=utf-8",
        "dashboard.js": "text/javascript; charset=utf-8",
        "api.js": "text/javascript; charset=utf-8",
        "map.js": "text/javascript; charset=utf-8",
        "world.js": "text/javascript; charset=utf-8",
        "observe.js": "text/javascript; charset=utf-8",
    ]

    static func file(_ name: String, container: String) -> Response {
        guard let type = files[name] else { return text(.notFound, "no such dashboard file: \(name)") }
        guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Dashboard"),
            var data = try? Data(contentsOf: url)
        else {
            return text(.notFound, "the dashboard's files are not installed beside this binary (\(name))")
        }
        if name == "index.html" {
            let page = String(decoding: data, as: UTF8.self)
            data = Data(page.replacingOccurrences(of: "{{CONTAINER}}", with: htmlEscaped(container)).utf8)
        }
        return Response(
            status: .ok, headers: [.contentType: type, .cacheControl: "no-cache"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func text(_ status: HTTPResponse.Status, _ message: String) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: message + "\n")))
    }

    /// The characters HTML text and attribute values must not hold as themselves.
    static let entities: [Unicode.Scalar: String] = ["&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;"]

    /// `s` with `&`, `<`, `>` and `"` as entities, scalar by scalar (`replacingOccurrences`
    /// compares characters: a `"` followed by a combining mark is another character, and stayed).
    static func htmlEscaped(_ s: String) -> String {
        var out = ""
        for u in s.unicodeScalars {
            if let entity = entities[u] { out += entity } else { out.unicodeScalars.append(u) }
        }
        return out
    }
}
