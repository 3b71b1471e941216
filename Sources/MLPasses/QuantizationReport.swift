import MLGraph

/// What `WeightQuantizer.quantize` did, per (node, weight role), with quality and size.
///
/// Sizes are storage bytes of a tensor: its encoded values (`ConstantTensor.encodedByteCount`)
/// plus its quantization parameters at 4 bytes each (linear scales and biases, LUT entries); see
/// `storedByteCount(of:)`.
public struct QuantizationReport: Sendable, Equatable, CustomStringConvertible {
    /// One compressed weight tensor.
    public struct Entry: Sendable, Equatable {
        /// Node (layer) name.
        public var layer: String
        /// `Op.name` of the node, e.g. "conv2d".
        public var opType: String
        /// Weight role, e.g. "weight", "bias", "gamma".
        public var weight: String
        /// The tensor's canonical shape (unchanged by the pass).
        public var shape: [Int]
        /// Number of values (product of `shape`).
        public var count: Int
        /// Bits per stored value (16 for fp16).
        public var bits: Int
        /// `QuantizationMode.name`: "fp16", "linear", "linear-symmetric", "kmeans".
        public var mode: String
        /// The tensor's encoding before the pass (e.g. "fp32", "8-bit LUT"); non-fp32 inputs were
        /// dequantized first and the SQNR is measured against those dequantized values.
        public var sourceEncoding: String
        /// 10·log10(Σw²/Σ(w−ŵ)²) in dB of the stored values against the input values; +∞ when exact.
        public var sqnr: Double
        /// Storage bytes before the pass (values + quantization parameters, see `storedByteCount(of:)`).
        public var bytesBefore: Int
        /// Storage bytes after the pass, counted the same way.
        public var bytesAfter: Int
        /// Σ w² over the tensor (float64), kept for the overall SQNR.
        public var signalEnergy: Double
        /// Σ (w − ŵ)² over the tensor (float64); 0 when exact.
        public var errorEnergy: Double
        /// A remark, e.g. "3 distinct values: exact", "clamped 2 values to ±65504".
        public var note: String?
    }

    /// A weight left unchanged, and why.
    public struct Skipped: Sendable, Equatable {
        /// Node (layer) name.
        public var layer: String
        /// `Op.name` of the node.
        public var opType: String
        /// Weight role.
        public var weight: String
        /// Number of values in the tensor.
        public var count: Int
        public var reason: SkipReason
    }

    /// The mode the pass ran with.
    public var mode: QuantizationMode
    /// Compressed tensors in graph order (roles sorted by name within a node).
    public var entries: [Entry]
    /// Weights left unchanged, in graph order.
    public var skipped: [Skipped]
    /// Messages for the user, e.g. custom layers skipped.
    public var notes: [String]
    /// Storage bytes of every weight in the graph before the pass (skipped ones included).
    public var totalBytesBefore: Int
    /// Storage bytes of every weight in the graph after the pass (skipped ones included).
    public var totalBytesAfter: Int

    /// Storage bytes of the compressed tensors only, before the pass.
    public var quantizedBytesBefore: Int { entries.reduce(0) { $0 + $1.bytesBefore } }
    /// Storage bytes of the compressed tensors only, after the pass.
    public var quantizedBytesAfter: Int { entries.reduce(0) { $0 + $1.bytesAfter } }
    /// Number of values compressed.
    public var quantizedValueCount: Int { entries.reduce(0) { $0 + $1.count } }
    /// SQNR in dB over all compressed values together (energies summed); +∞ when all exact.
    public var overallSQNR: Double {
        sqnrDB(signal: entries.reduce(0) { $0 + $1.signalEnergy }, error: entries.reduce(0) { $0 + $1.errorEnergy })
    }
    /// totalBytesBefore / totalBytesAfter (1 when nothing changed).
    public var compressionRatio: Double {
        totalBytesAfter == 0 ? 1 : Double(totalBytesBefore) / Double(totalBytesAfter)
    }

    /// The entry for `layer`/`weight`, if that tensor was compressed.
    public func entry(layer: String, weight: String) -> Entry? {
        entries.first { $0.layer == layer && $0.weight == weight }
    }

    /// A text table, one row per compressed tensor (columns layer, weight, count, bits, mode,
    /// SQNR dB, bytes before → after), then the skipped tensors, the notes, and the totals.
    public func renderTable() -> String {
        var rows: [[String]] = [["layer", "weight", "count", "bits", "mode", "SQNR dB", "bytes"]]
        for e in entries {
            rows.append([e.layer, e.weight, String(e.count), String(e.bits), e.mode, formatDB(e.sqnr),
                         "\(e.bytesBefore) → \(e.bytesAfter)"])
        }
        let widths = (0..<rows[0].count).map { c in rows.map { $0[c].count }.max() ?? 0 }
        let numeric: Set<Int> = [2, 3, 5]
        var out = ""
        for (r, row) in rows.enumerated() {
            let cells = row.enumerated().map { c, s -> String in
                let pad = String(repeating: " ", count: widths[c] - s.count)
                return numeric.contains(c) ? pad + s : s + pad
            }
            out += cells.joined(separator: "  ").trailingSpacesTrimmed + "\n"
            if r == 0 { out += widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ") + "\n" }
        }
        if !skipped.isEmpty {
            out += "\nleft unchanged (\(skipped.count)):\n"
            for s in skipped { out += "  \(s.layer) \(s.weight) (\(s.count) values): \(s.reason)\n" }
        }
        for n in notes { out += "note: \(n)\n" }
        out += "\n\(mode): \(entries.count) tensors, \(quantizedValueCount) values, overall SQNR \(formatDB(overallSQNR)) dB\n"
        out += "weights: \(totalBytesBefore) bytes → \(totalBytesAfter) bytes"
        out += totalBytesAfter > 0 ? " (\(String(format: "%.2f", compressionRatio))× smaller)\n" : "\n"
        return out
    }

    /// Same as `renderTable()`.
    public var description: String { renderTable() }
}

/// Storage bytes of a weight tensor: encoded values plus quantization parameters (linear scale and
/// bias entries, LUT entries) at 4 bytes each (the 2.1 encodings hold theirs in the encoded bytes).
public func storedByteCount(of tensor: ConstantTensor) -> Int {
    let params: Int
    switch tensor.encoding {
    case .float32, .float16: params = 0
    case .blockwise, .palettized, .sparse: params = 0  // parameters are inside the encoded bytes
    case let .linear(q): params = 4 * (q.scale.count + q.bias.count)
    case let .lookupTable(q): params = 4 * q.table.count
    }
    return tensor.encodedByteCount + params
}

extension String {
    var trailingSpacesTrimmed: String {
        var s = self
        while s.last == " " { s.removeLast() }
        return s
    }
}
