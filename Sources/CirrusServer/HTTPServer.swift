// HTTPServer: WebServicesAPI behind Hummingbird 2 (SwiftNIO). Every request under `/database/`
// (GET or POST) is collected (up to the body limit), handed to the API, and answered with its
// JSON (or an asset's bytes); GET …/notifications is a Server-Sent Events stream; GET /metrics
// is the Prometheus text of the server's metrics.

import CoreMetrics
import Hummingbird
import NIOCore
import RecordModel

/// The HTTP front of `cirrus serve`.
public enum HTTPServer {
    /// The router: `/database/**` → `api`.
    public static func router(_ api: WebServicesAPI) -> Router<BasicRequestContext> {
        let router = Router()
        for method in [HTTPRequest.Method.get, .post] {
            router.on("/database/**", method: method) { request, _ in await respond(api, request) }
        }
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: api.metricsText())))
        }
        router.get("/") { _, _ in Dashboard.file("index.html", container: api.containerIdentifier) }
        router.get("/dashboard/{file}") { _, context in
            Dashboard.file(context.parameters.get("file") ?? "", container: api.containerIdentifier)
        }
        return router
    }

    /// An application listening on `host:port` (port 0: any free port; `onStart` gets the port).
    public static func application(
        _ api: WebServicesAPI, host: String, port: Int, onStart: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let connections = api.metrics.connectionsOpen
        return Application(
            router: router(api),
            server: .http1(configuration: .init(additionalChannelHandlers: [ConnectionCounter(connections)])),
            configuration: .init(address: .hostname(host, port: port), serverName: "cirrus"),
            onServerRunning: { channel in await onStart(channel.localAddress?.port ?? port) })
    }

    static func respond(_ api: WebServicesAPI, _ request: Request) async -> Response {
        let body: ByteBuffer
        let limit = max(api.limits.maximumBodyBytes, api.limits.maximumAssetBytes)
        do {
            body = try await request.body.collect(upTo: limit)
        } catch {
            return json(
                WebResponse(
                    WebServicesError(
                        .quotaExceeded,
                        "the request body is larger than \(limit) bytes or was cut off: \(error)")))
        }
        var query: [String: String] = [:]
        for (k, v) in request.uri.queryParameters { query[String(k)] = String(v) }
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        // HTTP/1's Host header arrives as the request's authority.
        if let authority = request.head.authority { headers["host"] = authority }
        let web = WebRequest(
            method: request.method.rawValue, path: request.uri.path, query: query, headers: headers,
            body: Array(buffer: body))
        if request.method == .get && request.uri.path.hasSuffix("/" + WebServicesAPI.notificationsOperation) {
            switch api.openNotifications(web) {
            case .success(let session): return eventStream(session, metrics: api.metrics)
            case .failure(let error): return json(WebResponse(error))
            }
        }
        return json(await api.handle(web))
    }

    /// Something that happens on an event stream.
    enum StreamItem: Sendable {
        case event(NotificationEvent)
        case keepalive
        case end
    }

    /// A `text/event-stream` response: the reset and backlog at once, then live events and a
    /// keepalive comment every 15 s, until the client goes away, the limits of the session are
    /// reached or the server stops.
    static func eventStream(_ session: NotificationSession, metrics: ServerMetrics) -> Response {
        let body = ResponseBody { writer in
            metrics.streamsOpen.increment()
            defer { metrics.streamsOpen.decrement() }
            var sent = 0
            if session.listening.reset { try await writer.write(ByteBuffer(string: WebServicesAPI.resetText)) }
            let maximum = session.maximumEvents ?? Int.max
            for e in session.listening.backlog.prefix(maximum) {
                try await writer.write(ByteBuffer(string: WebServicesAPI.eventText(e)))
                sent += 1
            }
            if sent < maximum {
                try await stream(session, to: &writer, sent: sent, maximum: maximum)
            }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-cache"],
            body: body)
    }

    private static func stream(
        _ session: NotificationSession, to writer: inout any ResponseBodyWriter, sent: Int, maximum: Int
    ) async throws {
        let (items, sink) = AsyncStream<StreamItem>.makeStream()
        let live = session.listening.live
        let timeout = session.timeout
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await e in live { sink.yield(.event(e)) }
                sink.yield(.end)  // the feed ended (server stopping) or cut this listener off
            }
            group.addTask {
                while !Task.isCancelled {
                    try await Task.sleep(for: .seconds(15))
                    sink.yield(.keepalive)
                }
            }
            if let timeout {
                group.addTask {
                    try await Task.sleep(for: timeout)
                    sink.yield(.end)
                }
            }
            var sent = sent
            loop: for await item in items {
                switch item {
                case .event(let e):
                    try await writer.write(ByteBuffer(string: WebServicesAPI.eventText(e)))
                    sent += 1
                    if sent >= maximum { break loop }
                case .keepalive: try await writer.write(ByteBuffer(string: ": keepalive\n\n"))
                case .end: break loop
                }
            }
            group.cancelAll()
            sink.finish()
        }
    }

    static func json(_ r: WebResponse) -> Response {
        if let (content, type) = r.bytes {
            return Response(
                status: HTTPResponse.Status(code: r.status), headers: [.contentType: type],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: content)))
        }
        return Response(
            status: HTTPResponse.Status(code: r.status),
            headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: r.jsonBytes)))
    }
}

/// Counts the server's open connections (`cirrus_open_connections`): one per connection's
/// pipeline, from when it is added until the connection's pipeline is torn down.
/// Inbound only so that NIO accepts it; every event passes through untouched.
final class ConnectionCounter: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = NIOAny
    let meter: Meter

    init(_ meter: Meter) { self.meter = meter }

    func handlerAdded(context: ChannelHandlerContext) { meter.increment() }
    func handlerRemoved(context: ChannelHandlerContext) { meter.decrement() }
}
