/// Clamped arithmetic on instants (ns), shared by the backends and the core above them.
extension Int64 {
    /// `self + other`, clamped to `Int64`'s range: an instant pushed past the end of the
    /// clock stays at `Int64.max`, which the loop reads as "never".
    @inlinable
    package func saturatingAdd(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }

    /// `self - other`, clamped to `Int64`'s range.
    @inlinable
    package func saturatingSubtract(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other < 0 ? .max : .min) : difference
    }

    /// `self * other`, clamped to `Int64`'s range.
    @inlinable
    package func saturatingMultiply(_ other: Int64) -> Int64 {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        return overflow ? ((self < 0) == (other < 0) ? .max : .min) : product
    }

    /// The first `self + k * interval` (k ≥ 1) after `now`, clamped to `Int64`'s range: CF's
    /// next date of a repeating timer scheduled at `self` (no drift: fires missed while the
    /// loop was behind are skipped, not delivered in a burst).
    @inlinable
    package func firstGridPoint(every interval: Int64, after now: Int64) -> Int64 {
        let next = saturatingAdd(interval)
        guard now >= next else { return next }
        return saturatingAdd(((now - self) / interval + 1).saturatingMultiply(interval))
    }
}
