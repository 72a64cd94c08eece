import ArgumentParser
import ExampleSupport
import Foundation
import Glibc
import RunLoopKit

/// `config-reload`: reloads a `key = value` settings file each time it changes, through a
/// file source (`EVSource(watching:tolerance:)`).
@main
struct ConfigReload: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config-reload",
        abstract: "Reload a key = value settings file each time it changes.",
        discussion: """
            Watches the file at --path (or a new temporary file), and after each change \
            reloads it and prints its settings and what changed since the last load. The \
            file is watched through its directory, by name: an edit in place, an editor's \
            atomic save (a temporary file renamed over it), a delete and a re-create are all \
            seen. Changes closer together than --tolerance are reported in one reload. \
            With --demo the program edits the file itself a few times (in place, then as an \
            editor saves) and exits after --duration seconds. Ctrl-C ends the run.
            """)

    @Option(help: "The settings file to watch (default: a new temporary file, removed at exit).")
    var path: String?

    @Option(help: "Seconds a reload may wait for more changes after the first one.")
    var tolerance: Double = 0.1

    @Flag(help: "Edit the file a few times from a timer, to show the reloads.")
    var demo = false

    @Option(help: "Seconds to run (default: until Ctrl-C; with --demo, 2).")
    var duration: Double?

    @Option(name: .customLong("trace-svg"), help: ArgumentHelp(TraceSVG.help, valueName: "file"))
    var traceSVG: String?

    func validate() throws {
        guard tolerance.isFinite, tolerance >= 0, tolerance <= 60 else {
            throw ValidationError("--tolerance must be in 0...60 seconds, not \(tolerance)")
        }
        if let duration, !(duration.isFinite && duration > 0) {
            throw ValidationError("--duration must be a number of seconds greater than zero, not \(duration)")
        }
    }

    func run() throws {
        let file = try SettingsFile(path: path)
        defer { file.removeIfTemporary() }
        let reloader = Reloader(path: file.path)
        print("watching \(file.path) (tolerance \(tolerance) s)")
        reloader.reload(reason: "initial load")

        let loop = EVRunLoop.current
        let timeline = TraceSVG(recording: loop, to: traceSVG, title: "config-reload")
        // snippet: config-reload-watch
        let source = try EVSource(
            watching: file.path, tolerance: .nanoseconds(Int64(tolerance * 1e9)), label: "settings",
            handler: EVRunLoop.isolated { (source: EVSource) in
                reloader.reload(reason: "\(source.fileChanges)")
            })
        loop.add(source, forMode: .default)
        // end
        let interrupts = InterruptSignals.sources { loop.stop() }
        for interrupt in interrupts { loop.add(interrupt, forMode: .default) }
        let editor = demo ? DemoEditor(path: file.path) : nil
        if let editor { loop.add(editor.timer(), forMode: .default) }

        loop.runDefaultMode(forSeconds: duration ?? (demo ? 2 : nil))
        source.invalidate()
        for interrupt in interrupts { interrupt.invalidate() }
        try timeline?.write()
        print("\(reloader.loads) loads")
    }
}

/// The watched file: the one given, or a new one in a temporary directory with a few
/// settings, removed at exit.
struct SettingsFile {
    let path: String
    private let temporaryDirectory: String?

    init(path given: String?) throws {
        if let given {
            let absolute = given.hasPrefix("/") ? given : FileManager.default.currentDirectoryPath + "/" + given
            guard FileManager.default.fileExists(atPath: absolute) else {
                throw ValidationError("no file at \(absolute)")
            }
            path = absolute
            temporaryDirectory = nil
        } else {
            let directory = NSTemporaryDirectory() + "config-reload-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false,
                                                    attributes: [.posixPermissions: 0o700])
            path = directory + "/settings.conf"
            temporaryDirectory = directory
            try "# settings\nname = demo\nport = 8080\n".write(toFile: path, atomically: false, encoding: .utf8)
        }
    }

    func removeIfTemporary() {
        if let temporaryDirectory { try? FileManager.default.removeItem(atPath: temporaryDirectory) }
    }
}

/// Reads the file and prints its settings and what changed since the last load. Loop
/// thread only (its callout reaches it through `EVRunLoop.isolated`).
final class Reloader {
    let path: String
    private(set) var loads = 0
    private var settings: [String: String] = [:]

    init(path: String) {
        self.path = path
    }

    func reload(reason: String) {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            print("reload (\(reason)): cannot read \(path) (gone?); keeping the last settings")
            return
        }
        loads += 1
        let (parsed, problems) = Self.parse(text)
        print("reload \(loads) (\(reason)): \(parsed.count) settings")
        for problem in problems { print("  ! \(problem)") }
        for key in Set(settings.keys).union(parsed.keys).sorted() {
            switch (settings[key], parsed[key]) {
            case (nil, let new?): print("  + \(key) = \(new)")
            case (let old?, nil): print("  - \(key) (was \(old))")
            case (let old?, let new?) where old != new: print("  ~ \(key) = \(new) (was \(old))")
            default: print("    \(key) = \(parsed[key]!)")
            }
        }
        settings = parsed
    }

    /// `key = value` lines; blank lines and lines starting with `#` are skipped, a later
    /// key replaces an earlier one, and any other line is reported with its number.
    static func parse(_ text: String) -> (settings: [String: String], problems: [String]) {
        var settings: [String: String] = [:]
        var problems: [String] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let equals = line.firstIndex(of: "=") else {
                problems.append("line \(index + 1): no '=' in \"\(line)\"")
                continue
            }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            guard !key.isEmpty else {
                problems.append("line \(index + 1): no key before '='")
                continue
            }
            settings[key] = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        }
        return (settings, problems)
    }
}

/// `--demo`: edits the file from a repeating timer, one edit every 0.4 s (longer than the
/// default tolerance, so that each is a reload of its own): in place twice, then twice as
/// an editor saves (a temporary file in the same directory renamed over the original).
final class DemoEditor {
    let path: String
    private var step = 0

    init(path: String) {
        self.path = path
    }

    func timer() -> EVTimer {
        EVTimer(interval: 0.4, repeats: true, label: "demo edit", block: EVRunLoop.isolated { (timer: EVTimer) in
            self.edit(timer)
        })
    }

    private func edit(_ timer: EVTimer) {
        step += 1
        let port = 8080 + step
        switch step {
        case 1:
            print("demo: writing in place (port = \(port))")
            writeInPlace("# settings\nname = demo\nport = \(port)\n")
        case 2:
            print("demo: writing in place (a new key, and a line without '=')")
            writeInPlace("# settings\nname = demo\nport = \(port)\nlog level = debug\noops\n")
        case 3, 4:
            print("demo: saving as an editor does (temporary file + rename, port = \(port))")
            saveAtomically("# settings\nname = demo \(step)\nport = \(port)\nlog level = info\n")
        default:
            timer.invalidate()
        }
    }

    /// Truncates the file and writes `text` into it (the same inode).
    private func writeInPlace(_ text: String) {
        let descriptor = open(path, O_WRONLY | O_TRUNC)
        guard descriptor >= 0 else { return print("demo: open failed (errno \(errno))") }
        defer { close(descriptor) }
        var text = text
        text.withUTF8 { bytes in _ = write(descriptor, bytes.baseAddress, bytes.count) }
    }

    /// Writes `text` to a temporary file next to the original and renames it over it.
    private func saveAtomically(_ text: String) {
        let temporary = path + ".tmp-\(getpid())"
        do {
            try text.write(toFile: temporary, atomically: false, encoding: .utf8)
            guard rename(temporary, path) == 0 else { return print("demo: rename failed (errno \(errno))") }
        } catch {
            print("demo: \(error)")
        }
    }
}
