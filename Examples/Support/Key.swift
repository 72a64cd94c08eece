/// A key press read from a terminal in raw mode.
public enum Key: Hashable, Sendable {
    /// The up arrow (`ESC [ A`).
    case up
    /// The down arrow (`ESC [ B`).
    case down
    /// Any other single byte, as a character (`"q"`, `"j"`, …).
    case character(Character)

    /// The keys in `bytes` as read from the terminal: `ESC [ A` and `ESC [ B` are the arrow
    /// keys; other escape sequences are dropped; every other byte is one character.
    public static func parse(_ bytes: [UInt8]) -> [Key] {
        var keys: [Key] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x1B, index + 2 < bytes.count, bytes[index + 1] == UInt8(ascii: "[") {
                switch bytes[index + 2] {
                case UInt8(ascii: "A"): keys.append(.up)
                case UInt8(ascii: "B"): keys.append(.down)
                default: break
                }
                index += 3
            } else {
                keys.append(.character(Character(UnicodeScalar(byte))))
                index += 1
            }
        }
        return keys
    }
}
