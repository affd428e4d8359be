// HTTPServer: WebServicesAPI behind Hummingbird 2 (SwiftNIO). Every request under `/database/`
// (GET or POST) is collected (up to the body limit), handed to the API, and answered with its
// JSON; nothing else is served yet.

import Hummingbird
import RecordModel

/// The HTTP front of `cirrus serve`.
public enum HTTPServer {
    /// The router: `/database/**` → `api`.
    public static func router(_ api: WebServicesAPI) -> Router<BasicRequestContext> {
        let router = Router()
        for method in [HTTPRequest.Method.get, .post] {
            router.on("/database/**", method: method) { request, _ in await respond(api, request) }
        }
        return router
    }

    /// An application listening on `host:port` (port 0: any free port; `onStart` gets the port).
    public static func application(
        _ api: WebServicesAPI, host: String, port: Int, onStart: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        Application(
            router: router(api), configuration: .init(address: .hostname(host, port: port), serverName: "cirrus"),
            onServerRunning: { channel in await onStart(channel.localAddress?.port ?? port) })
    }

    static func respond(_ api: WebServicesAPI, _ request: Request) async -> Response {
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: api.limits.maximumBodyBytes)
        } catch {
            return json(
                WebResponse(
                    WebServicesError(
                        .quotaExceeded,
                        "the request body is larger than \(api.limits.maximumBodyBytes) bytes or was cut off: \(error)")))
        }
        var query: [String: String] = [:]
        for (k, v) in request.uri.queryParameters { query[String(k)] = String(v) }
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        let r = await api.handle(
            WebRequest(
                method: request.method.rawValue, path: request.uri.path, query: query, headers: headers,
                body: Array(buffer: body)))
        return json(r)
    }

    static func json(_ r: WebResponse) -> Response {
        Response(
            status: HTTPResponse.Status(code: r.status),
            headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: r.body.jsonText)))
    }
}
