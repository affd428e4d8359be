// DataFile: `--data FILE --queries FILE` — placeholder replaced below.
import Foundation

struct DataFileRun {
    let command: Compare
    func run(dataPath: String, queriesPath: String) async throws -> RunReport {
        throw SQLiteError(message: "--data is not implemented yet")
    }
}
