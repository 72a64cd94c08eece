// Small numeric helpers shared by the measurements.

/// A duration in seconds.
func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// `value` rounded to three decimal places.
func roundedMillis(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
