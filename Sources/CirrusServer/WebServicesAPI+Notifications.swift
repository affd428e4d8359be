// Notifications of subscriptions over HTTP, since push services are out of reach.
//
//   GET …/{public|private}/notifications            (authenticated like every request)
//   Last-Event-ID: 41                                (or ?lastEventID=41: resume after event 41;
//                                                     without: every event the server keeps)
//   → 200 text/event-stream
//     id: 42
//     event: notification
//     data: {"subscriptionID": "cafes", "reason": "create", "recordName": "p9", "recordType": "Place"}
//
//     event: reset                                   (events after 41 were lost: fetch changes)
//     data: {"reason": "…"}
//
//     : keepalive                                    (every 15 s)
//
// `?maxEvents=N` ends the stream after N events and `?timeout=S` after S seconds (for scripts
// and tests); otherwise it lasts until the client goes away or the server stops. The same
// operation answered without streaming (WebServicesAPI.handle, e.g. POST) is the kept backlog
// as JSON: {"events": [{"id": 42, "notification": {…}}], "reset": false}. Feeds: NotificationHub.swift.

import Cirrus
import Foundation
import RecordModel

/// What `…/notifications` answers: the events to send at once and the stream of the rest.
struct NotificationSession {
    var listening: NotificationHub.Listening
    /// End after this many events (nil: no limit).
    var maximumEvents: Int?
    /// End after this long (nil: no limit).
    var timeout: Duration?
}

extension WebServicesAPI {
    /// The operation name.
    static let notificationsOperation = "notifications"

    /// Opens a notification session for a request, or the error response.
    func openNotifications(_ request: WebRequest) -> Result<NotificationSession, WebServicesError> {
        do throws(WebServicesError) {
            let route = try Route(path: request.path, container: containerIdentifier)
            guard route.operation == Self.notificationsOperation else {
                throw WebServicesError(.notFound, "not a notifications path")
            }
            let db = try database(route, identity: try authenticate(request, route: route))
            return .success(try notificationSession(request, db: db))
        } catch {
            return .failure(error)
        }
    }

    func notificationSession(_ request: WebRequest, db: Database) throws(WebServicesError) -> NotificationSession {
        func number(_ text: String?, _ name: String, in range: ClosedRange<Int>) throws(WebServicesError) -> Int? {
            guard let text else { return nil }
            guard let n = Int(text.trimmingCharacters(in: .whitespaces)), range.contains(n) else {
                throw WebServicesError(
                    .badRequest, "\(name): \"\(text)\" is not a number in \(range.lowerBound)…\(range.upperBound)")
            }
            return n
        }
        let last = try number(
            request.headers["last-event-id"] ?? request.query["lastEventID"], "Last-Event-ID", in: 0...Int.max)
        let maximum = try number(request.query["maxEvents"], "maxEvents", in: 1...1_000_000)
        let timeout = try number(request.query["timeout"], "timeout", in: 1...86_400)
        let feed = try notifications.feed(db)
        return NotificationSession(
            listening: feed.listen(after: last), maximumEvents: maximum, timeout: timeout.map { .seconds($0) })
    }

    /// The non-streaming answer: the events kept after Last-Event-ID.
    func notificationBacklog(_ request: WebRequest, db: Database) throws(WebServicesError) -> JSONValue {
        let session = try notificationSession(request, db: db)
        let events = session.listening.backlog.prefix(session.maximumEvents ?? Int.max).map {
            JSONValue.object([("id", .integer(Int64($0.id))), ("notification", $0.json)])
        }
        return .object([("events", .array(Array(events))), ("reset", .bool(session.listening.reset))])
    }

    /// The text of one Server-Sent Event.
    static func eventText(_ e: NotificationEvent) -> String {
        "id: \(e.id)\nevent: notification\ndata: \(e.json.jsonText)\n\n"
    }

    static let resetText =
        "event: reset\ndata: {\"reason\": \"notifications after Last-Event-ID were lost (too old, or the server restarted); fetch changes, then listen again\"}\n\n"
}
