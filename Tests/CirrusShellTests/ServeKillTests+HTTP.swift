// LoopbackHTTP: the HTTP/1.1 client of ServeKillTests — one POST per connection to 127.0.0.1,
// blocking, with `Connection: close`, its answer read to the end of the stream. It owns sending a
// request once and deciding whether a complete answer came back; what the answer means is the
// writer's business (ServeKillTests+Writer.swift).
//
// Why not URLSession: libcurl may send a request again on a connection it took to be reused, and a
// test of acknowledgement must know that each request went out exactly once and whether its whole
// answer arrived. A killed server leaves a short body or a reset connection, never an answer.

#if canImport(Glibc)
    import Glibc
#endif

/// What the server answered to one request: its status and its whole body.
struct LoopbackAnswer: Sendable {
    /// The HTTP status code.
    var status: Int
    /// The body, de-chunked, exactly as long as the server said it would be.
    var body: [UInt8]
}

/// Why no complete answer came back; the request may or may not have been acted on.
struct LoopbackFailure: Error, Sendable, CustomStringConvertible {
    /// What went wrong, with errno's text when a system call failed.
    var description: String

    init(_ description: String) { self.description = description }

    /// `what` failed with the current errno.
    static func system(_ what: String) -> LoopbackFailure {
        LoopbackFailure("\(what): \(String(cString: strerror(errno)))")
    }
}

/// One-shot HTTP/1.1 requests to a loopback port.
enum LoopbackHTTP {
    /// POSTs `body` to `path` (with its query) on 127.0.0.1:`port` and waits for the whole answer,
    /// at most `timeoutSeconds` per blocking send or receive.
    static func post(
        port: Int, path: String, body: [UInt8], timeoutSeconds: Int = 15
    ) -> Result<LoopbackAnswer, LoopbackFailure> {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return .failure(.system("socket")) }
        defer { close(fd) }
        // A server that stops answering without dying must fail the request, not hang the test.
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        let size = socklen_t(MemoryLayout<timeval>.size)
        guard setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, size) == 0,
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, size) == 0
        else { return .failure(.system("setsockopt")) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(truncatingIfNeeded: port)).bigEndian
        address.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)  // 127.0.0.1
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { return .failure(.system("connect to port \(port)")) }
        let head =
            "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        let request = Array(head.utf8) + body
        var sent = 0
        while sent < request.count {
            // MSG_NOSIGNAL: a server killed while we write must give EPIPE, not kill the test runner.
            let n = request.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return send(fd, base + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return .failure(.system("send")) }
            sent += n
        }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { return .failure(.system("recv after \(received.count) bytes")) }
            if n == 0 { break }
            received.append(contentsOf: chunk[0..<n])
        }
        return parse(received)
    }

    /// The status and body of a whole HTTP/1.1 answer; a failure when it is cut short anywhere.
    static func parse(_ bytes: [UInt8]) -> Result<LoopbackAnswer, LoopbackFailure> {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = firstIndex(of: separator, in: bytes, from: 0) else {
            return .failure(LoopbackFailure("no complete header in \(bytes.count) bytes"))
        }
        let lines = String(decoding: bytes[0..<end], as: UTF8.self).split(separator: "\r\n")
        let statusWords = lines.first?.split(separator: " ") ?? []
        guard statusWords.count >= 2, statusWords[0].hasPrefix("HTTP/1."), let status = Int(statusWords[1]) else {
            return .failure(LoopbackFailure("not an HTTP/1 status line: \(lines.first ?? "")"))
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            headers[name] = line[line.index(after: colon)...].trimmingSpaces
        }
        let rest = Array(bytes[(end + separator.count)...])
        if let length = headers["content-length"] {
            guard let n = Int(length), rest.count == n else {
                return .failure(LoopbackFailure("body of \(rest.count) bytes, Content-Length \(length)"))
            }
            return .success(LoopbackAnswer(status: status, body: rest))
        }
        if headers["transfer-encoding"]?.lowercased() == "chunked" {
            return dechunk(rest).map { LoopbackAnswer(status: status, body: $0) }
        }
        // Delimited by the close alone: a cut body is caught when it does not parse as JSON.
        return .success(LoopbackAnswer(status: status, body: rest))
    }

    /// A chunked body's bytes; a failure unless it ends with the zero-length chunk.
    static func dechunk(_ bytes: [UInt8]) -> Result<[UInt8], LoopbackFailure> {
        let crlf: [UInt8] = [13, 10]
        var body: [UInt8] = []
        var i = 0
        while let lineEnd = firstIndex(of: crlf, in: bytes, from: i) {
            let sizeText = String(decoding: bytes[i..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingSpaces, radix: 16) else {
                return .failure(LoopbackFailure("bad chunk size \"\(sizeText)\""))
            }
            if size == 0 { return .success(body) }
            let start = lineEnd + 2
            guard start + size + 2 <= bytes.count else { break }
            body.append(contentsOf: bytes[start..<(start + size)])
            i = start + size + 2
        }
        return .failure(LoopbackFailure("chunked body cut after \(body.count) bytes"))
    }

    static func firstIndex(of needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= needle.count, start <= bytes.count - needle.count else { return nil }
        for i in start...(bytes.count - needle.count) where bytes[i..<(i + needle.count)].elementsEqual(needle) {
            return i
        }
        return nil
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (header values, chunk sizes).
    fileprivate var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        return String(drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}
