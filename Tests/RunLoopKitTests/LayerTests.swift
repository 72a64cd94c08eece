import Foundation
import Testing

/// The layers inside `Sources/RunLoopKit` (ARCHITECTURE.md, "Layers"), checked on the source
/// tree: one SwiftPM target holds the API, the engine and the backends, so the compiler does
/// not. The platform layer is a target of its own (RunLoopKitPlatform), which the compiler
/// keeps below them.
@Suite("Layers")
struct LayerTests {
    /// `Sources/RunLoopKit`, found from this file (`Tests/RunLoopKitTests/LayerTests.swift`).
    static let sources = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/RunLoopKit")

    /// The Swift files of one layer's folder, with their text.
    static func files(in folder: String) throws -> [(name: String, text: String)] {
        let directory = sources.appendingPathComponent(folder)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".swift") }.sorted()
        return try names.map { ($0, try String(contentsOf: directory.appendingPathComponent($0), encoding: .utf8)) }
    }

    /// `text` without its `//` comments (names in prose are not dependencies).
    static func code(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { line in line.range(of: "//").map { String(line[..<$0.lowerBound]) } ?? String(line) }
            .joined(separator: "\n")
    }

    /// The names in `names` that `text` contains as whole words.
    static func named(_ names: [String], in text: String) -> [String] {
        names.filter { text.range(of: "\\b\($0)\\b", options: .regularExpression) != nil }
    }

    @Test("the folders are found (so that the other checks cannot pass on an empty tree)")
    func foldersFound() throws {
        #expect(try Self.files(in: "Core").count >= 20)
        #expect(try Self.files(in: "Backend").contains { $0.name == "LibevBackend.swift" })
    }

    @Test("Core names no backend implementation and never the C shim, not even in comments")
    func coreIsPureSwift() throws {
        let forbidden = ["CRunLoopKitLibev", "LibevBackend", "VirtualBackend", "CycleClock", "CycleRate",
                         "SignalClaims", "WakeGrid"]
        for (name, text) in try Self.files(in: "Core") {
            #expect(Self.named(forbidden, in: text).isEmpty, "Core/\(name) names \(Self.named(forbidden, in: text))")
            #expect(!text.contains("clibev_"), "Core/\(name) calls the C shim")
        }
    }

    @Test("backends use none of the engine's types")
    func backendsBelowCore() throws {
        let engine = ["LoopEngine", "ModeState", "ResolvedMode", "TimerQueue", "TimerOrder", "TimerHeap",
                      "TimerStore", "SortedRun", "ThreadLoops", "LoopShared", "LoopLink", "Inbox", "Members"]
        for (name, text) in try Self.files(in: "Backend") {
            let found = Self.named(engine, in: Self.code(text))
            #expect(found.isEmpty, "Backend/\(name) uses \(found)")
        }
    }

    @Test("only Backend/ imports CRunLoopKitLibev")
    func cShimImports() throws {
        for folder in ["Public", "Async", "Core"] {
            for (name, text) in try Self.files(in: folder) {
                #expect(!Self.code(text).contains("import CRunLoopKitLibev"), "\(folder)/\(name) imports CRunLoopKitLibev")
            }
        }
    }
}
