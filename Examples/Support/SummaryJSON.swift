import Foundation

/// The examples' JSON summaries: one line, keys sorted, so that runs compare line by line.
public enum SummaryJSON {
    /// `value` encoded as one line of JSON with sorted keys; with `snakeCaseKeys`, property
    /// names are converted to snake_case.
    public static func encode(_ value: some Encodable, snakeCaseKeys: Bool = false) throws -> String {
        let encoder = JSONEncoder()
        if snakeCaseKeys { encoder.keyEncodingStrategy = .convertToSnakeCase }
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
