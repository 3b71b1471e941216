import MLGraph

/// Keras `Attention` (Luong) and `AdditiveAttention` (Bahdanau) on query [N, Tq, D] and value
/// [N, Tv, D] (key = value unless a third input is given), as Keras' `BaseDenseAttention`:
///
///     Attention, score_mode "dot":     scores = (q·kᵀ)·scale
///     Attention, score_mode "concat":  scores = c·Σ_d tanh(scale·(q[:, :, None] + k[:, None]))
///     AdditiveAttention:               scores = Σ_d scale[d]·tanh(q[:, :, None] + k[:, None])
///     weights = softmax(scores (+ −1e9 above the diagonal with use_causal_mask)), out = weights·v
///
/// `scale` (a scalar, or [D] for AdditiveAttention) and `c` (`concat_score_weight`) are the
/// layer's weights (absent = 1). Dropout is the identity at inference. `return_attention_scores`
/// gives the weights as output 1. Masks passed to the call are refused (they would change the
/// result).
struct DotAttentionConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.matmul, .binary, .softmax, .expandDims, .activation, .reduce, .fill, .bandPart] }
    var classNames: [String] { ["Attention", "AdditiveAttention"] }
    var minimumInputCount: Int { 2 }

    func weightRoles(_ layer: KerasLayerConfig, version: KerasVersion) -> [String] {
        let additive = layer.className == "AdditiveAttention"
        var r: [String] = []
        if layer.config["use_scale"]?.bool ?? additive { r.append("scale") }
        if !additive, layer.config["score_mode"]?.string == "concat" { r.append("concat_score_weight") }
        return r
    }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        let additive = ctx.className == "AdditiveAttention"
        let mode = additive ? "additive" : try ctx.string("score_mode", default: "dot")
        guard ["dot", "concat", "additive"].contains(mode) else { throw ctx.invalid("score_mode", expected: "\"dot\" or \"concat\"") }
        if ctx.value("causal")?.bool == true {
            throw ctx.unsupported("the Keras 2.4–2.9 `causal=True` argument is not supported", hint: "re-save with use_causal_mask=True in the call")
        }
        let roles = try ctx.callInputs(positional: ["query", "value", "key"], allowed: ["query", "value", "key"])
        guard let q = roles["query"], let v = roles["value"] else {
            throw ctx.unsupported("expects [query, value] or [query, value, key] inputs", hint: "check the model")
        }
        let k = roles["key"] ?? v
        guard let qt = ctx.type(of: q), let kt = ctx.type(of: k), let vt = ctx.type(of: v),
              qt.rank >= 2, kt.rank == qt.rank, vt.rank == qt.rank, qt.shape.last == kt.shape.last else {
            throw ctx.unsupported("query, key and value must have one rank ≥ 2 and query and key one last dimension; found \(ctx.inputTypes.map { formatShape($0.shape) }.joined(separator: ", "))",
                                  hint: "check the model")
        }
        let causal = try ctx.callFlag("use_causal_mask")
        let returnScores = try ctx.callFlag("return_attention_scores") || ctx.outputNames.count > 1
        let dim = qt.shape[qt.rank - 1]
        let wantRoles = weightRoles(ctx.layer, version: ctx.kerasVersion)
        var chain = KerasNodeChain(ctx)
        var scores: String
        if mode == "dot" {
            scores = chain.add("scores", .matmul(MatMulAttributes(transposeY: true)), [q, k])
            if wantRoles.contains("scale") {
                let s = try ctx.constant("scale", shape: [1]) { try ctx.weight("scale", shape: []) }
                scores = chain.binary("scaled_scores", .mul, scores, constant: s)
            }
        } else {
            let qe = chain.add("query_expanded", .expandDims(axes: [-2]), [q])
            let ke = chain.add("key_expanded", .expandDims(axes: [-3]), [k])
            var sum = chain.add("sum", .binary(.add), [qe, ke])
            if mode == "concat", wantRoles.contains("scale") {
                let s = try ctx.constant("scale", shape: [1]) { try ctx.weight("scale", shape: []) }
                sum = chain.binary("scaled_sum", .mul, sum, constant: s)
            }
            var t = chain.add("tanh", .activation(.tanh), [sum])
            if mode == "additive", wantRoles.contains("scale") {
                let s = try ctx.constant("scale", shape: [dim]) { try ctx.weight("scale", shape: [dim]) }
                t = chain.binary("scaled_tanh", .mul, t, constant: s)
            }
            scores = chain.add("scores", .reduce(ReduceAttributes(function: .sum, axes: [-1], keepDims: false)), [t])
            if mode == "concat", wantRoles.contains("concat_score_weight") {
                let c = try ctx.constant("concat_score_weight", shape: [1]) { try ctx.weight("concat_score_weight", shape: []) }
                scores = chain.binary("weighted_scores", .mul, scores, constant: c)
            }
        }
        if causal {
            let tq = qt.shape[qt.rank - 2], tv = kt.shape[kt.rank - 2]
            guard let n = checkedProduct([tq, tv]), n <= 1 << 28 else {
                throw ctx.unsupported("a causal mask of \(tq)×\(tv) is too large", hint: "use shorter sequences")
            }
            scores = appendCausalMask(&chain, scores: scores, rows: tq, columns: tv)
        }
        let weights = chain.add("weights", .softmax(axis: -1), [scores],
                                output: returnScores && ctx.outputNames.count > 1 ? ctx.outputNames[1] : nil)
        var nodes = chain.nodes
        nodes.append(Node(name: ctx.nodeName, op: .matmul(MatMulAttributes()), inputs: [weights, v], outputs: [ctx.outputNames[0]]))
        return nodes
    }
}

/// Appends Keras' causal mask as an additive [rows, columns] bias and adds it to `scores`: 0
/// where column ≤ row, −1e9 above the diagonal (Keras subtracts 1e9 from the masked scores in
/// float32). Built from attribute-only ops (fill, bandPart, sub), so weight passes (fp16, whose
/// range stops at 65504) never see the −1e9.
func appendCausalMask(_ chain: inout KerasNodeChain, scores: String, rows: Int, columns: Int) -> String {
    let full = chain.add("causal_fill", .fill(FillAttributes(shape: [rows, columns], value: -1e9)), [])
    let upper = chain.add("causal_upper", .bandPart(lower: 0, upper: -1), [full])  // column ≥ row
    let diagonal = chain.add("causal_diagonal", .bandPart(lower: 0, upper: 0), [full])
    let bias = chain.add("causal_bias", .binary(.sub), [upper, diagonal])  // column > row: −1e9, else 0
    return chain.add("causal_mask", .binary(.add), [scores, bias])
}
