import Foundation
import Testing

/// README.md's quick starts are whole programs: each ```swift block of the README that has
/// `import` lines is written to a `main.swift` of its own, exactly as the README shows it, and
/// type-checked alone by `swiftc` against the modules this build made. A block that compiles
/// only inside a snippet's test (its imports, or an `async` context, lent by the test file)
/// fails here. (`DocBlocksTests` checks that each block is also a compiled snippet.)
@Suite struct WholeProgramTests {
    /// A ```swift block of README.md, as written, and the heading it is under.
    struct Program {
        var heading: String
        var line: Int
        var text: String
        var isWhole: Bool { text.split(separator: "\n").contains { $0.hasPrefix("import ") } }
    }

    /// The quick starts that are excerpts, not programs: a GTK app's module for GTK is the
    /// app's own (Examples/gtk-timers), so that block is a part of that example's file.
    static let excerpts: Set<String> = ["### A GTK app"]

    @Test func readmeQuickStartsTypeCheckAsWritten() throws {
        let readme = try String(contentsOf: DocBlocksTests.root.appendingPathComponent("README.md"), encoding: .utf8)
        let programs = Self.swiftBlocks(in: readme)
        // The first block (the synchronous main) and every quick start but the excerpts.
        for (index, program) in programs.enumerated() where index == 0 || Self.isQuickStart(program.heading, in: readme) {
            #expect(program.isWhole, "README.md:\(program.line) (\(program.heading)): a quick start without its imports")
        }
        let whole = programs.filter(\.isWhole)
        #expect(whole.count >= 3, "only \(whole.count) whole programs in README.md")
        let compiler = try #require(Self.swiftc(), "no swiftc on PATH")
        let build = try #require(Self.modulesDirectory(), "no Modules directory next to the test binary")
        for program in whole {
            let folder = FileManager.default.temporaryDirectory
                .appendingPathComponent("readme-program-\(getpid())-\(program.line)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = folder.appendingPathComponent("main.swift")
            try program.text.write(to: file, atomically: true, encoding: .utf8)
            let (status, output) = try Self.run(compiler, ["-typecheck", "-swift-version", "6", "-I", build.modules.path]
                + build.moduleMaps.flatMap { ["-Xcc", "-fmodule-map-file=\($0.path)"] } + [file.path])
            #expect(status == 0, "README.md:\(program.line) (\(program.heading)) does not compile as written:\n\(output)")
        }
    }

    /// Whether `heading` is one of the "## Quick starts" section's.
    static func isQuickStart(_ heading: String, in readme: String) -> Bool {
        guard let start = readme.range(of: "\n## Quick starts\n") else { return false }
        let section = readme[start.upperBound...]
        let end = section.range(of: "\n## ")?.lowerBound ?? section.endIndex
        return section[..<end].contains("\n\(heading)\n") && !excerpts.contains(heading)
    }

    /// The top-level ```swift blocks of a Markdown text, as written.
    static func swiftBlocks(in markdown: String) -> [Program] {
        var programs: [Program] = []
        var heading = ""
        var open: (line: Int, lines: [String])?
        for (index, line) in markdown.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if var block = open {
                if line == "```" {
                    programs.append(Program(heading: heading, line: block.line, text: block.lines.joined(separator: "\n") + "\n"))
                    open = nil
                } else {
                    block.lines.append(String(line))
                    open = block
                }
            } else if line == "```swift" {
                open = (index + 1, [])
            } else if line.hasPrefix("#") {
                heading = String(line)
            }
        }
        return programs
    }

    /// The build's Swift modules, and the module maps of its C modules (this package's and
    /// its dependencies' checkouts), found from the test binary's directory.
    static func modulesDirectory() -> (modules: URL, moduleMaps: [URL])? {
        var products = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<3 where !FileManager.default.fileExists(atPath: products.appendingPathComponent("Modules").path) {
            products.deleteLastPathComponent()
        }
        let modules = products.appendingPathComponent("Modules")
        guard FileManager.default.fileExists(atPath: modules.path) else { return nil }
        // <scratch>/<triple>/debug: the checkouts are in <scratch>.
        let scratch = products.deletingLastPathComponent().deletingLastPathComponent()
        var roots = [DocBlocksTests.root.appendingPathComponent("Sources")]
        let checkouts = scratch.appendingPathComponent("checkouts")
        for name in (try? FileManager.default.contentsOfDirectory(atPath: checkouts.path)) ?? [] {
            roots.append(checkouts.appendingPathComponent(name).appendingPathComponent("Sources"))
        }
        var maps: [URL] = []
        for root in roots {
            let names = (try? FileManager.default.subpathsOfDirectory(atPath: root.path)) ?? []
            maps += names.filter { $0.hasSuffix("module.modulemap") }.map { root.appendingPathComponent($0) }
        }
        return (modules, maps.sorted { $0.path < $1.path })
    }

    /// `swiftc` on `PATH`.
    static func swiftc() -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"
        return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent("swiftc") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// Runs `tool` with `arguments`: its exit status and its output and errors together.
    static func run(_ tool: URL, _ arguments: [String]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = tool
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}
