// LineEditor: the one place that talks to libedit (through its readline-compatible API):
// reading a line with a prompt and editing keys, persistent history, tab completion.
//
// Global state: libedit keeps its line buffer, history and completion hook in C globals, and its
// completion callback is a plain C function pointer with no context argument. The completer
// closure therefore lives in one static (`LineEditor.completer`), set once before the first
// `readLine` and only read from libedit's callback on the same thread. Nothing else is global.

import CEditLine
import Foundation

final class LineEditor {
    /// Completions for (whole line, word being completed). Read only by `complete` below.
    nonisolated(unsafe) static var completer: ((String, String) -> [String])?

    let historyPath: String?

    init(historyPath: String?, completer: @escaping (String, String) -> [String]) {
        self.historyPath = historyPath
        LineEditor.completer = completer
        cirrus_el_set_completion(lineEditorComplete)
        if let historyPath { _ = read_history(historyPath) }
    }

    /// One line without its newline; nil at end of input (Ctrl-D).
    func readLine(prompt: String) -> String? {
        guard let raw = readline(prompt) else { return nil }
        defer { free(raw) }
        let line = String(cString: raw)
        if !line.trimmingCharacters(in: .whitespaces).isEmpty {
            add_history(line)
            if let historyPath {
                _ = write_history(historyPath)
                _ = history_truncate_file(historyPath, 1000)
            }
        }
        return line
    }
}

/// libedit's completion hook: an array of malloc'd strings — the common prefix to insert, then
/// the candidates — ending in NULL; NULL when nothing matches.
private func lineEditorComplete(
    _ text: UnsafePointer<CChar>?, _ start: Int32, _ end: Int32
) -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? {
    guard let text, let completer = LineEditor.completer else { return nil }
    let word = String(cString: text)
    let line = cirrus_el_line_buffer().map { String(cString: $0) } ?? word
    let prefixBytes = Array(line.utf8.prefix(max(0, Int(start))))
    let before = String(decoding: prefixBytes, as: UTF8.self)
    let matches = completer(before + word, word)
    guard !matches.isEmpty else { return nil }
    var common = matches[0]
    for m in matches.dropFirst() {
        while !m.hasPrefix(common) { common.removeLast() }
    }
    let items = [common] + (matches.count == 1 ? [] : matches)
    guard
        let array = malloc(MemoryLayout<UnsafeMutablePointer<CChar>?>.stride * (items.count + 1))?
            .bindMemory(to: UnsafeMutablePointer<CChar>?.self, capacity: items.count + 1)
    else { return nil }
    for (i, s) in items.enumerated() { array[i] = strdup(s) }
    array[items.count] = nil
    return array
}

/// Columns of the terminal on standard output (COLUMNS, else 100 when not a terminal).
func terminalWidth() -> Int {
    var w = winsize()
    if ioctl(1, UInt(TIOCGWINSZ), &w) == 0, w.ws_col > 0 { return Int(w.ws_col) }
    if let c = ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init), c > 0 { return c }
    return 100
}
