import RunLoopKitPlatform

extension EVRunLoop.Error {
    /// The public form of a platform call's failure: the same call and `errno`.
    init(_ failure: SystemCallError) {
        self.init(call: failure.call, errno: failure.errno)
    }

    /// Runs `body`, a platform call, and throws its failure as an ``EVRunLoop/Error``.
    static func translating<T>(_ body: () throws(SystemCallError) -> T) throws(EVRunLoop.Error) -> T {
        do {
            return try body()
        } catch {
            throw EVRunLoop.Error(error)
        }
    }
}
