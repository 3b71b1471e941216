import Foundation

/// Signal-to-quantization-noise ratio of a weight tensor, in dB:
/// 10·log10(Σ w² / Σ (w − ŵ)²), sums in float64.
///
/// Returns +∞ when ŵ equals w exactly, and −∞ when w is all zeros but ŵ is not. Pairs whose
/// reference value is not finite are left out (the passes keep NaN and ±inf unchanged).
/// - Precondition: `reference.count == approximation.count`.
public func sqnr(_ reference: [Float], _ approximation: [Float]) -> Double {
    precondition(reference.count == approximation.count, "sqnr: \(reference.count) vs \(approximation.count) values")
    let (s, e) = signalAndError(reference, approximation)
    return sqnrDB(signal: s, error: e)
}

/// Σ w² and Σ (w − ŵ)² in float64 over finite reference values.
func signalAndError(_ w: [Float], _ q: [Float]) -> (signal: Double, error: Double) {
    var s = 0.0, e = 0.0
    for i in 0..<w.count where w[i].isFinite {
        let a = Double(w[i]), d = a - Double(q[i])
        s += a * a
        e += d * d
    }
    return (s, e)
}

/// 10·log10(signal/error) with the conventions of `sqnr` (+∞ for zero error).
func sqnrDB(signal: Double, error: Double) -> Double {
    if error == 0 { return .infinity }
    if signal == 0 { return -.infinity }
    return 10 * log10(signal / error)
}

/// How close a quantized model's output is to the float model's, with coremltools'
/// `compare_models` definitions (coreml-format-facts §2.12). The signal is taken from the
/// *quantized* output, and 1e-7 is added to the noise:
/// - SNR  = 10·log10(mean(q²) / (mean((fp − q)²) + 1e-7))
/// - PSNR = 10·log10(max(q²)  / (mean((fp − q)²) + 1e-7))
public struct OutputComparison: Sendable, Equatable, CustomStringConvertible {
    /// Number of elements compared.
    public var count: Int
    /// Signal-to-noise ratio in dB (coremltools definition above).
    public var snr: Double
    /// Peak signal-to-noise ratio in dB (coremltools definition above).
    public var psnr: Double
    /// max |fp − q| over all elements.
    public var maxAbsError: Double
    /// mean |fp − q|.
    public var meanAbsError: Double

    /// e.g. "SNR 42.10 dB, PSNR 55.31 dB, max |err| …".
    public var description: String {
        "SNR \(formatDB(snr)) dB, PSNR \(formatDB(psnr)) dB, max |err| \(maxAbsError), mean |err| \(meanAbsError) over \(count) values"
    }
}

/// Compares a float model's output with a quantized model's (same element order), in float64.
/// - Throws: `QuantizationError.invalidArgument` when the counts differ or are zero.
public func compareOutputs(reference: [Float], quantized: [Float]) throws -> OutputComparison {
    guard reference.count == quantized.count else {
        throw QuantizationError.invalidArgument("cannot compare outputs of \(reference.count) and \(quantized.count) values")
    }
    guard !reference.isEmpty else { throw QuantizationError.invalidArgument("cannot compare empty outputs") }
    var noise = 0.0, signal = 0.0, peak = 0.0, maxErr = 0.0, sumAbs = 0.0
    for i in 0..<reference.count {
        let q = Double(quantized[i]), d = Double(reference[i]) - q
        noise += d * d
        signal += q * q
        peak = Swift.max(peak, q * q)
        maxErr = Swift.max(maxErr, Swift.abs(d))
        sumAbs += Swift.abs(d)
    }
    let n = Double(reference.count)
    let noiseVar = noise / n + 1e-7
    return OutputComparison(count: reference.count, snr: 10 * log10((signal / n) / noiseVar),
                            psnr: 10 * log10(peak / noiseVar), maxAbsError: maxErr, meanAbsError: sumAbs / n)
}

/// "inf", "-inf" or the value with two decimals.
func formatDB(_ v: Double) -> String {
    if v == .infinity { return "inf" }
    if v == -.infinity { return "-inf" }
    if v.isNaN { return "nan" }
    return String(format: "%.2f", v)
}
