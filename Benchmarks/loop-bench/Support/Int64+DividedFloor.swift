extension Int64 {
    /// Division rounding toward negative infinity.
    func dividedFloor(by divisor: Int64) -> Int64 {
        let (q, r) = quotientAndRemainder(dividingBy: divisor)
        return (r != 0 && (r < 0) != (divisor < 0)) ? q - 1 : q
    }
}
