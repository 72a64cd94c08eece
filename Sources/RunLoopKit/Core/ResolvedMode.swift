/// A mode as an operation on it touches it: whether it is ``EVRunLoop/Mode/common``, and
/// the concrete modes' states (``LoopEngine/resolve(_:)`` makes it and keeps the last one).
struct ResolvedMode {
    let mode: EVRunLoop.Mode
    let isCommon: Bool
    let states: [ModeState]
}
