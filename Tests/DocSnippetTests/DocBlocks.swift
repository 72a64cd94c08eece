/// Reads fenced code blocks out of Markdown and doc comments, and snippet regions out of
/// Swift files, each as lines without their common leading indentation.
enum DocBlocks {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A fenced block of documentation.
    struct Block {
        var place: String
        var language: String
        /// The block's `import` lines.
        var imports: [String]
        /// The other lines, dedented, trailing blank lines dropped.
        var body: [String]
    }

    /// A `// snippet: NAME` … `// end` region of a Swift file.
    struct Snippet {
        var name: String
        var fileImports: Set<String>
        var body: [String]
    }

    /// The fenced blocks of a Markdown text.
    static func markdownBlocks(in text: String, file: String) throws -> [Block] {
        try blocks(in: text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init), file: file)
    }

    /// The fenced blocks of the `///` doc comments of a Swift file.
    static func docCommentBlocks(in text: String, file: String) throws -> [Block] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String? in
            let trimmed = line.drop { $0 == " " }
            guard trimmed.hasPrefix("///") else { return nil }
            let rest = trimmed.dropFirst(3)
            return String(rest.hasPrefix(" ") ? rest.dropFirst() : rest)
        }
        // Doc comments apart from each other: a non-comment line ends any block.
        var result: [Block] = []
        var run: [String] = []
        var runStart = 0
        for index in 0...lines.count {
            if index < lines.count, let line = lines[index] {
                if run.isEmpty { runStart = index }
                run.append(line)
            } else if !run.isEmpty {
                result += try blocks(in: run, file: file, firstLine: runStart + 1)
                run = []
            }
        }
        return result
    }

    /// The snippet regions of a Swift file.
    static func snippets(in text: String, file: String) throws -> [Snippet] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let imports = Set(lines.map { $0.trimmingLeadingSpaces() }.filter { $0.hasPrefix("import ") })
        var result: [Snippet] = []
        var open: (name: String, lines: [String])?
        for (index, line) in lines.enumerated() {
            let trimmed = line.trimmingLeadingSpaces()
            if trimmed.hasPrefix("// snippet: ") {
                guard open == nil else { throw Failure(description: "\(file):\(index + 1): snippet inside a snippet") }
                open = (String(trimmed.dropFirst("// snippet: ".count)), [])
            } else if trimmed == "// end", let region = open {
                let body = dedented(region.lines.filter { !$0.trimmingLeadingSpaces().hasPrefix("import ") })
                result.append(Snippet(name: region.name, fileImports: imports, body: body))
                open = nil
            } else if open != nil {
                open!.lines.append(line)
            }
        }
        if let open { throw Failure(description: "\(file): snippet \(open.name) has no // end") }
        return result
    }

    private static func blocks(in lines: [String], file: String, firstLine: Int = 1) throws -> [Block] {
        var result: [Block] = []
        var open: (line: Int, language: String, indent: Int, lines: [String])?
        for (index, line) in lines.enumerated() {
            let trimmed = line.trimmingLeadingSpaces()
            if trimmed.hasPrefix("```") {
                if let block = open {
                    let imports = block.lines.map { $0.trimmingLeadingSpaces() }.filter { $0.hasPrefix("import ") }
                    let body = dedented(block.lines.filter { !$0.trimmingLeadingSpaces().hasPrefix("import ") })
                    result.append(Block(place: "\(file):\(block.line)", language: block.language,
                                        imports: imports, body: body))
                    open = nil
                } else {
                    open = (firstLine + index, String(trimmed.dropFirst(3)).trimmingLeadingSpaces(),
                            line.count - trimmed.count, [])
                }
            } else if open != nil {
                open!.lines.append(line)
            }
        }
        if let open { throw Failure(description: "\(file):\(open.line): a code block is never closed") }
        return result
    }

    /// Lines without their common leading indentation and trailing spaces, blank lines at
    /// either end dropped.
    static func dedented(_ lines: [String]) -> [String] {
        var lines = lines.map { String($0.reversed().drop { $0 == " " }.reversed()) }
        while lines.first?.isEmpty == true { lines.removeFirst() }
        while lines.last?.isEmpty == true { lines.removeLast() }
        let indent = lines.filter { !$0.isEmpty }.map { $0.count - $0.trimmingLeadingSpaces().count }.min() ?? 0
        return lines.map { String($0.dropFirst(min(indent, $0.count))) }
    }
}

extension StringProtocol {
    func trimmingLeadingSpaces() -> String { String(drop { $0 == " " }) }
}
