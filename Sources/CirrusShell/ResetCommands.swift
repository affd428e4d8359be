// ResetCommands: the logic of `cirrus reset --db DIR --environment development`: the reset of a
// container's development environment (Container.resetDevelopment). Production cannot be reset.
// The confirmation (a terminal prompt or --yes) is the command line's; this runs a confirmed
// reset. Exit codes: 0 ok, 1 refused or failed (nothing changed unless it says so), 2 usage.

import Cirrus
import CirrusIO
import RecordLog
import RecordModel

/// `cirrus reset` as a library.
///
/// ```swift
/// let out = ResetCommands.run(db: "notes", environment: "development")
/// print(out.stdout)   // reset the development environment of notes (production untouched)
/// ```
public enum ResetCommands {
    /// What a person must type to confirm the reset of `db`: the directory's last component.
    public static func confirmationWord(db: String) -> String {
        let parts = db.split(separator: "/")
        return parts.last.map(String.init) ?? db
    }

    /// The warning shown before the confirmation prompt.
    public static func warning(db: String) -> String {
        "This deletes the development schema and every record, zone, subscription and change of the "
            + "development environment of \(db). Production is not touched.\n"
            + "Type \(confirmationWord(db: db)) to confirm: "
    }

    /// Resets the development environment of the container `db`. `environment` is the text of
    /// `--environment`: anything but `development` is refused (exit 2), production by name.
    /// `checkOnly`: only the checks of `environment` (another engine's reset follows).
    public static func run(
        db: String, environment: String, checkOnly: Bool = false, fileSystem: any FileSystem = POSIXFileSystem()
    ) -> CommandOutput {
        switch environment {
        case Environment.development.rawValue: break
        case Environment.production.rawValue:
            return CommandOutput(
                stderr: "cirrus reset: --environment production: production is never reset (only development can "
                    + "be: its schema reaches production by promotion); nothing was changed\n",
                exitCode: 2)
        default:
            return CommandOutput(
                stderr: "cirrus reset: --environment \(environment): expected development\n", exitCode: 2)
        }
        if checkOnly { return CommandOutput() }
        guard fileSystem.exists(db) else {
            return CommandOutput(stderr: "cirrus reset: \(db): no such container directory\n", exitCode: 1)
        }
        do {
            try Container.resetDevelopment(at: db, options: ContainerOptions(fileSystem: fileSystem))
        } catch {
            return CommandOutput(stderr: "cirrus reset: \(error)\n", exitCode: 1)
        }
        return CommandOutput(stdout: "reset the development environment of \(db) (production untouched)\n")
    }
}
