// Core ML WeightParams → IR ConstantTensor, keeping compressed encodings compressed.
import Diagnostics
import MLGraph

/// A reason a layer cannot be imported, raised while converting one layer and collected by the
/// importer into `CoreMLImportError.unsupportedLayers`.
struct LayerImportFailure: Error {
    /// Why, followed by the underlying error's text when there is one.
    var reason: String { cause.appended(to: ownReason) }
    /// `reason` without the underlying error's text.
    var ownReason: String
    /// The underlying error (the IR's `GraphError`, …), kept as a value (issue 13).
    var cause: DiagnosticCause?
    init(_ reason: String, cause: (any Error)? = nil) { ownReason = reason; self.cause = cause.map(DiagnosticCause.init) }
}

extension Spec.WeightParams {
    /// The number of values stored, when it can be told without the layer's shape (float32,
    /// float16 and int8 storage); for n-bit storage the largest count the bytes can hold.
    var storedElementCount: Int {
        switch storage {
        case .empty, .mixed: return 0
        case .float32: return floatValue.count
        case .float16: return float16Value.count / 2
        case .int8: return int8RawValue.count
        case .quantized:
            guard let bits = Int(exactly: quantization?.numberOfBits ?? 8), (1...64).contains(bits) else { return 0 }
            return rawValue.count * 8 / bits
        }
    }
}

enum WeightImport {
    /// Converts `params` (the row-major values of a tensor of `shape`) to a constant.
    ///
    /// float32 stays float32; float16 stays `.float16`; n-bit linear quantization becomes
    /// `.linear` with per-channel parameters along `axis` (0 for convolution and inner product,
    /// 1 for deconvolution) or one pair for the whole tensor; n-bit look-up tables become
    /// `.lookupTable`. `int8RawValue` (int8 dynamic quantization) and quantization parameters the
    /// IR cannot carry are dequantized to float32.
    /// - Throws: `LayerImportFailure` naming `what` when the weights are missing, of the wrong
    ///   size, or inconsistent.
    static func constant(_ params: Spec.WeightParams?, shape: [Int], axis: Int = 0, what: String) throws -> ConstantTensor {
        let n = try Checked.product(shape, "\(what) shape")
        guard let p = params else {
            throw LayerImportFailure("\(what) weights are missing (expected \(n) values of shape \(formatShape(shape)))")
        }
        switch p.storage {
        case .empty:
            throw LayerImportFailure("\(what) weights are empty (expected \(n) values of shape \(formatShape(shape)))")
        case .mixed:
            throw LayerImportFailure("\(what) weights set more than one of floatValue, float16Value, rawValue and "
                + "int8RawValue (Core ML accepts exactly one)")
        case .float32:
            guard p.floatValue.count == n else {
                throw LayerImportFailure("\(what) has \(p.floatValue.count) float32 values, expected \(n) for shape \(formatShape(shape))")
            }
            return ConstantTensor(shape: shape, floats: p.floatValue)
        case .float16:
            guard p.float16Value.count == 2 * n else {
                throw LayerImportFailure("\(what) has \(p.float16Value.count / 2) float16 values, expected \(n) for shape \(formatShape(shape))")
            }
            return try ConstantTensor(shape: shape, encoding: .float16, storage: .copying(p.float16Value))
        case .int8:
            return try dequantizedConstant(p, shape: shape, what: what)
        case .quantized:
            guard let q = p.quantization else {
                throw LayerImportFailure("\(what) has quantized rawValue bytes but no quantization parameters")
            }
            let bits = try Checked.int(q.numberOfBits, "\(what) numberOfBits", in: 1...8)
            let need = Swift.max(1, (n * bits + 7) / 8)
            guard p.rawValue.count >= need else {
                throw LayerImportFailure("\(what) holds \(p.rawValue.count) bytes of \(bits)-bit values, expected at least \(need) for \(n) values")
            }
            switch q.scheme {
            case let .linear(scale, bias)?:
                let channels = axis < shape.count ? shape[axis] : 1
                let scaleOK = scale.count == 1 || scale.count == channels
                let biasOK = bias.isEmpty || bias.count == 1 && scale.count == 1 || bias.count == scale.count
                if scaleOK && biasOK && !scale.isEmpty {
                    let enc = WeightEncoding.linear(LinearQuantization(bits: bits, axis: axis, scale: scale, bias: bias))
                    return try ConstantTensor(shape: shape, encoding: enc, storage: .copying(Array(p.rawValue.prefix(need))))
                }
                // Parameters laid out differently from the IR's per-axis convention: dequantize.
                return try dequantizedConstant(p, shape: shape, what: what)
            case let .lookupTable(table)?:
                guard table.count == 1 << bits else {
                    throw LayerImportFailure("\(what) has a look-up table of \(table.count) entries; \(bits)-bit codes need \(1 << bits)")
                }
                let enc = WeightEncoding.lookupTable(LookupTableQuantization(bits: bits, table: table))
                return try ConstantTensor(shape: shape, encoding: enc, storage: .copying(Array(p.rawValue.prefix(need))))
            case nil:
                throw LayerImportFailure("\(what) is quantized but names neither linear nor look-up-table quantization")
            }
        }
    }

    /// The weights dequantized to float32 values (any storage).
    static func floats(_ params: Spec.WeightParams?, count: Int, what: String) throws -> [Float] {
        guard let p = params else { throw LayerImportFailure("\(what) weights are missing (expected \(count) values)") }
        guard let v = p.dequantized(count: count) else {
            throw LayerImportFailure("\(what) weights do not hold \(count) values (found \(p.storedElementCount) in "
                + "\(precisionName(p)) storage)")
        }
        return v
    }

    private static func dequantizedConstant(_ p: Spec.WeightParams, shape: [Int], what: String) throws -> ConstantTensor {
        let n = try Checked.product(shape, "\(what) shape")
        guard let v = p.dequantized(count: n) else {
            throw LayerImportFailure("\(what) cannot be dequantized to \(n) values (inconsistent \(precisionName(p)) parameters)")
        }
        return ConstantTensor(shape: shape, floats: v)
    }

    /// "fp32", "fp16", "8-bit linear", "4-bit LUT", "int8", "empty" or "mixed".
    static func precisionName(_ p: Spec.WeightParams) -> String {
        switch p.storage {
        case .empty: return "empty"
        case .mixed: return "mixed"
        case .float32: return "fp32"
        case .float16: return "fp16"
        case .int8: return "int8"
        case .quantized:
            let bits = p.quantization?.numberOfBits ?? 0
            switch p.quantization?.scheme {
            case .linear?: return "\(bits)-bit linear"
            case .lookupTable?: return "\(bits)-bit LUT"
            case nil: return "\(bits)-bit (no parameters)"
            }
        }
    }
}
