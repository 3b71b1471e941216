// IR constants → Core ML WeightParams, following the validator's rules
// (coreml-format-facts §2.2): exactly one storage field; fp16 weight and bias paired for
// convolution / innerProduct; LUT of 2^n entries; rawValue of ceil(n·N/8) bytes.
import MLGraph

extension ExportWriter {
    /// `WeightParams` for constant `c` of `node` (`role` names it in messages), keeping its
    /// encoding: float32 → `floatValue`; float16 → `float16Value` (spec 2); linear → `rawValue` +
    /// `linearQuantization` (spec 3); lookup table → `rawValue` + `lookupTableQuantization`
    /// (spec 3). Per-channel linear scales must run along `channelAxis` (0 for convolution and
    /// inner-product weights and vectors, 1 for deconvolution weights, as coremltools quantizes
    /// them). Returns nil after recording a problem.
    mutating func weightParams(_ c: ConstantTensor, node: Node, role: String, channelAxis: Int = 0) -> Spec.WeightParams? {
        let n = c.elementCount
        switch c.encoding {
        case .float32:
            return Spec.WeightParams(c.floats())
        case .float16:
            need(2, "fp16 weights", node: node.name)
            return Spec.WeightParams(float16Value: Array(c.storage.buffer.prefix(2 * n)))
        case let .linear(q):
            guard (1...8).contains(q.bits) else {
                fail(node, "\(role) is linearly quantized to \(q.bits) bits; Core ML needs 1…8 bits", "Re-quantize with 1 to 8 bits.")
                return nil
            }
            if q.scale.count != 1 {
                guard q.axis == channelAxis, q.axis < c.shape.count, q.scale.count == c.shape[q.axis] else {
                    fail(node, "\(role) has \(q.scale.count) linear-quantization scales along axis \(q.axis) of shape \(formatShape(c.shape)); "
                        + "Core ML takes one scale per tensor or one per output channel (axis \(channelAxis))",
                         "Re-quantize per tensor or per output channel (axis \(channelAxis)).")
                    return nil
                }
            }
            guard q.bias.isEmpty || q.bias.count == q.scale.count else {
                fail(node, "\(role) has \(q.scale.count) linear-quantization scales but \(q.bias.count) biases; Core ML needs 0 biases or one per scale",
                     "Re-quantize the weight.")
                return nil
            }
            need(3, "\(q.bits)-bit linear quantized weights", node: node.name)
            return Spec.WeightParams(
                rawValue: Array(c.storage.buffer.prefix(c.encodedByteCount)),
                quantization: Spec.QuantizationParams(numberOfBits: UInt64(q.bits),
                                                      scheme: .linear(scale: q.scale, bias: q.bias)))
        case let .lookupTable(q):
            guard (1...8).contains(q.bits), q.table.count == 1 << q.bits else {
                fail(node, "\(role) is LUT-quantized with \(q.bits) bits and a \(q.table.count)-entry table; Core ML needs 1…8 bits and exactly 2^bits entries",
                     "Pad the table with zeros to \(1 << max(0, min(q.bits, 8))) entries or re-quantize.")
                return nil
            }
            need(3, "\(q.bits)-bit lookup-table quantized weights", node: node.name)
            return Spec.WeightParams(
                rawValue: Array(c.storage.buffer.prefix(c.encodedByteCount)),
                quantization: Spec.QuantizationParams(numberOfBits: UInt64(q.bits), scheme: .lookupTable(q.table)))
        // MARK: compressed ML program weights (format 2.1): NeuralNetwork weights cannot hold them
        case .blockwise, .palettized, .sparse:
            let note = "node '\(node.name)': \(role) (\(c.encoding)) written as float32"
            if !notes.contains(note) { notes.append(note) }
            return Spec.WeightParams(c.floats())
        }
    }

    /// The bias of a convolution or inner product, stored to match the weight: fp16 weights get
    /// an fp16 bias (the validator rejects fp16 weights with an fp32 bias and the reverse);
    /// quantized weights keep a quantized bias with a single linear scale or a look-up table (the
    /// validator's rule for convolution biases; coremltools stores biases so); any other bias is
    /// written as float32 (quantized weights with a float bias are accepted).
    mutating func pairedBias(_ bias: ConstantTensor, weight: Spec.WeightParams, node: Node) -> Spec.WeightParams {
        if weight.storage == .float16 {
            if case .float16 = bias.encoding {
                return Spec.WeightParams(float16Value: Array(bias.storage.buffer.prefix(2 * bias.elementCount)))
            }
            notes.append("node '\(node.name)': bias (\(bias.encoding)) written as fp16 to match the fp16 weights")
            return Spec.WeightParams(float16Value: Spec.encodeFloat16(bias.floats()))
        }
        if case .float32 = bias.encoding { return Spec.WeightParams(bias.floats()) }
        // A quantized bias of quantized weights stays quantized (as coremltools stores it): one
        // linear scale (the validator's rule for convolution biases) or a look-up table.
        if weight.quantization != nil {
            var keep = false
            if case let .linear(q) = bias.encoding, q.scale.count == 1 { keep = true }
            if case .lookupTable = bias.encoding { keep = true }
            if keep, let p = weightParams(bias, node: node, role: "bias") { return p }
        }
        notes.append("node '\(node.name)': bias (\(bias.encoding)) written as float32 to match the \(weight.storage == .float32 ? "float32" : "quantized") weights")
        return Spec.WeightParams(bias.floats())
    }
}
