import MLGraph

// EinsumDense and MultiHeadAttention, composed of the IR's `einsum` (equations built as Keras
// builds them: keras/src/layers/attention/multi_head_attention.py `_build_proj_equation`,
// `_build_attention_equation`), `softmax`, `binary` and `constant`.

/// One EinsumDense projection: x (IR tensor) ⊗ kernel by `equation` (letters only, no
/// ellipsis), + bias (stored shape, broadcast from the right as Keras adds it).
func appendEinsumDense(_ chain: inout KerasNodeChain, tag: String, input: String, equation: String,
                       kernel: ConstantTensor, bias: ConstantTensor?) -> String {
    let k = chain.constant(tag + "_kernel", kernel)
    var y = chain.add(tag, .einsum(equation: equation), [input, k])
    if let bias { y = chain.binary(tag + "_bias", .add, y, constant: bias) }
    return y
}

/// Replaces "..." in an EinsumDense equation by explicit letters for an input of rank `rank`
/// (Keras puts the ellipsis in the input and output terms only).
func expandEinsumEllipsis(_ equation: String, inputRank: Int) -> String? {
    let eq = equation.replacingOccurrences(of: " ", with: "")
    guard eq.contains("...") else { return eq }
    guard let arrow = eq.range(of: "->") else { return nil }
    let lhs = String(eq[..<arrow.lowerBound]), rhs = String(eq[arrow.upperBound...])
    let terms = lhs.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    guard terms.count == 2, terms[0].components(separatedBy: "...").count == 2, !terms[1].contains("...") else { return nil }
    let explicit = terms[0].replacingOccurrences(of: "...", with: "").count
    let n = inputRank - explicit
    guard n >= 0 else { return nil }
    let used = Set(eq.unicodeScalars)
    let free = (Array("ZYXWVUTSRQPONMLKJIHGFEDCBA".unicodeScalars) + Array("zyxwvutsrqponmlkjihgfedcba".unicodeScalars)).filter { !used.contains($0) }
    guard free.count >= n else { return nil }
    let fill = String(String.UnicodeScalarView(free.prefix(n).reversed()))
    return terms[0].replacingOccurrences(of: "...", with: fill) + "," + terms[1] + "->" + rhs.replacingOccurrences(of: "...", with: fill)
}

/// `EinsumDense(equation, output_shape, activation, bias_axes)`: an einsum of the input with the
/// kernel (stored shape), + bias (`bias_axes`; stored in Keras' broadcast shape), activation.
struct EinsumDenseConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.constant, .einsum, .binary, .activation, .softmax] }
    var classNames: [String] { ["EinsumDense"] }

    func weightRoles(_ layer: KerasLayerConfig, version: KerasVersion) -> [String] {
        let b = layer.config["bias_axes"]
        return b == nil || b?.isNull == true || b?.string == "" ? ["kernel"] : ["kernel", "bias"]
    }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        let raw = try ctx.string("equation")
        guard let equation = expandEinsumEllipsis(raw, inputRank: ctx.inputShape.count) else {
            throw ctx.invalid("equation", expected: "an einsum equation 'input,kernel->output' (an ellipsis only in the input and output)")
        }
        if case let .failure(e) = EinsumEquation.parse(equation) {
            throw ctx.unsupported("equation '\(raw)' \(e.reason)", hint: "use an equation of letters (the IR's einsum)")
        }
        let roles = weightRoles(ctx.layer, version: ctx.kerasVersion)
        let kshape = try ctx.storedShape("kernel")
        guard let kn = checkedProduct(kshape), kn <= TensorType.maxElementCount else { throw ctx.invalid("equation", expected: "a kernel of a sane size") }
        let kernel = try ctx.constant("kernel", shape: kshape) { try ctx.weight("kernel", shape: kshape) }
        var bias: ConstantTensor? = nil
        if roles.contains("bias") {
            let bshape = try ctx.storedShape("bias")
            bias = try ctx.constant("bias", shape: bshape) { try ctx.weight("bias", shape: bshape) }
        }
        var chain = KerasNodeChain(ctx)
        let y = appendEinsumDense(&chain, tag: "einsum", input: ctx.inputs[0], equation: equation, kernel: kernel, bias: bias)
        switch try ctx.kerasActivation(ctx.value("activation")) {
        case .identity: break
        case let .fused(a): chain.add("activation", .activation(a), [y])
        case .softmax: chain.add("softmax", .softmax(axis: -1), [y])
        }
        return chain.finish(output: ctx.outputNames[0])
    }
}

/// `MultiHeadAttention` (Keras 2.4+ / Keras 3) on query [N, T…, Dq], value [N, S…, Dv], key
/// (default value): query/key/value EinsumDense projections to [N, …, heads, key_dim /
/// value_dim], query scaled by 1/√key_dim, scores by Keras' dot-product einsum, softmax over the
/// attention axes (`attention_axes`, default every axis but batch, heads and features; with
/// `use_causal_mask` −1e9 is added above the diagonal), the combine einsum, and the output
/// projection to `output_shape` (default Dq). Dropout is the identity at inference;
/// `return_attention_scores` gives the softmax weights [N, heads, T…, S…] as output 1. Masks
/// passed to the call (`attention_mask`, `query_mask`, …) are refused.
struct MultiHeadAttentionConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.constant, .einsum, .binary, .softmax, .reshapeND, .fill, .bandPart] }
    var classNames: [String] { ["MultiHeadAttention"] }

    static let projections = ["query", "key", "value", "attention_output"]

    func weightRoles(_ layer: KerasLayerConfig, version: KerasVersion) -> [String] {
        let bias = layer.config["use_bias"]?.bool != false
        return Self.projections.flatMap { bias ? ["\($0)/kernel", "\($0)/bias"] : ["\($0)/kernel"] }
    }

    /// The stored weights by projection ("query", …) and kind ("kernel", "bias"): legacy names
    /// `mha/query/kernel:0`, Keras 3 archives `query/vars/0` (variable 0 the kernel, 1 the bias).
    func storedByRole(_ ctx: KerasLayerContext) throws -> [String: KerasStoredWeight] {
        let alias = ["query_dense": "query", "key_dense": "key", "value_dense": "value", "output_dense": "attention_output"]
        var out: [String: KerasStoredWeight] = [:]
        for w in ctx.storedWeights {
            let comps = w.name.split(separator: "/").map(String.init)
            var sub: String, kind: String
            if let j = comps.lastIndex(of: "vars"), j >= 1, j + 1 < comps.count, let i = Int(comps[j + 1]) {
                sub = comps[j - 1]; kind = i == 0 ? "kernel" : i == 1 ? "bias" : "?"
            } else if comps.count >= 2 {
                sub = comps[comps.count - 2]; kind = w.role
            } else { continue }
            sub = alias[sub] ?? sub
            let key = sub + "/" + kind
            guard out[key] == nil else {
                throw KerasConversionError.missingWeight(file: ctx.file, layer: ctx.qualifiedName, className: ctx.className,
                                                         expected: "one weight \(key)", found: ctx.storedWeights.map(\.description).joined(separator: ", "))
            }
            out[key] = w
        }
        let roles = weightRoles(ctx.layer, version: ctx.kerasVersion)
        if roles.allSatisfy({ out[$0] != nil }) { return out }
        // Names that do not say the projection: Keras' order (query, key, value, output).
        guard ctx.storedWeights.count == roles.count else {
            throw KerasConversionError.missingWeight(file: ctx.file, layer: ctx.qualifiedName, className: ctx.className,
                                                     expected: "weights " + roles.joined(separator: ", "),
                                                     found: ctx.storedWeights.isEmpty ? "no weights stored for this layer" : ctx.storedWeights.map(\.description).joined(separator: ", "))
        }
        out = [:]
        for (r, w) in zip(roles, ctx.storedWeights) { out[r] = w }
        return out
    }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        if try ctx.bool("use_gate", default: false) {
            throw ctx.unsupported("use_gate=True is not supported", hint: "convert this layer with a `LayerHook`")
        }
        if ctx.value("sliding_window") != nil {
            throw ctx.unsupported("sliding_window attention is not supported", hint: "convert this layer with a `LayerHook`")
        }
        let heads = try ctx.int("num_heads"), keyDim = try ctx.int("key_dim")
        let valueDim = try ctx.int("value_dim", default: keyDim)
        guard heads > 0, heads <= 1 << 16, keyDim > 0, keyDim <= 1 << 20, valueDim > 0, valueDim <= 1 << 20 else {
            throw ctx.invalid("num_heads", expected: "positive num_heads, key_dim, value_dim")
        }
        let useBias = try ctx.bool("use_bias", default: true)
        let roles = try ctx.callInputs(positional: ["query", "value", "key"], allowed: ["query", "value", "key"])
        guard let q = roles["query"], let v = roles["value"] else {
            throw ctx.unsupported("expects query and value inputs", hint: "check the model")
        }
        let k = roles["key"] ?? v
        guard let qt = ctx.type(of: q), let kt = ctx.type(of: k), let vt = ctx.type(of: v) else {
            throw ctx.unsupported("cannot find the input types", hint: "check the model")
        }
        let rank = qt.rank + 1  // projected rank: [N, T…, heads, dim]
        guard qt.rank >= 3, kt.rank == qt.rank, vt.rank == qt.rank, rank <= 12 else {
            throw ctx.unsupported("query, key and value must have one rank of 3 or more, found \(formatShape(qt.shape)), \(formatShape(kt.shape)), \(formatShape(vt.shape))",
                                  hint: "check the model")
        }
        // Attention axes in projected coordinates (Keras: default range(1, rank - 2)).
        var attnAxes: [Int]
        if let a = ctx.value("attention_axes") {
            let list = a.int.map { [$0] } ?? a.array?.compactMap(\.int) ?? []
            guard !list.isEmpty, list.count == (a.array?.count ?? 1) else { throw ctx.invalid("attention_axes", expected: "an axis or a list of axes") }
            attnAxes = try list.map { x -> Int in
                let n = x < 0 ? x + (rank - 1) : x
                guard n >= 1, n < rank - 2 else { throw ctx.invalid("attention_axes", expected: "axes between the batch and the feature axis of the query") }
                return n
            }
            guard Set(attnAxes).count == attnAxes.count else { throw ctx.invalid("attention_axes", expected: "distinct axes") }
        } else {
            attnAxes = Array(1..<(rank - 2))
        }
        let outShape: [Int]
        if let o = ctx.value("output_shape") {
            if let i = o.int { outShape = [i] } else if let a = o.array, !a.isEmpty, a.allSatisfy({ $0.int != nil }) { outShape = a.compactMap(\.int) } else {
                throw ctx.invalid("output_shape", expected: "an integer or a list of integers")
            }
        } else {
            outShape = [qt.shape[qt.rank - 1]]
        }
        guard outShape.allSatisfy({ $0 > 0 }), rank - 2 + outShape.count <= 12 else { throw ctx.invalid("output_shape", expected: "positive sizes") }
        let causal = try ctx.callFlag("use_causal_mask")

        let stored = try storedByRole(ctx)
        func read(_ role: String, _ shape: [Int]) throws -> ConstantTensor {
            guard let w = stored[role] else {
                throw KerasConversionError.missingWeight(file: ctx.file, layer: ctx.qualifiedName, className: ctx.className,
                                                         expected: "weight \(role)", found: ctx.storedWeights.map(\.description).joined(separator: ", "))
            }
            guard w.shape == shape else {
                throw KerasConversionError.weightShapeMismatch(file: ctx.file, layer: ctx.qualifiedName, className: ctx.className, weight: w.name,
                                                               expected: shape, found: w.shape,
                                                               hint: "the architecture and the weights disagree: pass the architecture that belongs to this weights file")
            }
            return try ctx.constant(role, shape: shape) { try ctx.readWeight(w) }
        }

        var chain = KerasNodeChain(ctx)
        func letters(_ range: Range<Int>) -> String {
            String(String.UnicodeScalarView(range.map { Unicode.Scalar(UInt8(97 + $0)) }))
        }
        // Projections: free dims (all but the feature axis), bound dim (features), heads and dim.
        func project(_ tag: String, _ role: String, _ x: String, _ t: TensorType, _ dim: Int) throws -> String {
            let free = t.rank - 1
            let eq = letters(0..<(free + 1)) + "," + letters(free..<(free + 3)) + "->" + letters(0..<free) + letters((free + 1)..<(free + 3))
            let kernel = try read(role + "/kernel", [t.shape[t.rank - 1], heads, dim])
            let bias = useBias ? try read(role + "/bias", [heads, dim]) : nil
            return appendEinsumDense(&chain, tag: tag, input: x, equation: eq, kernel: kernel, bias: bias)
        }
        let qp = try project("query", "query", q, qt, keyDim)
        let kp = try project("key", "key", k, kt, keyDim)
        let vp = try project("value", "value", v, vt, valueDim)
        let qs = chain.binary("query_scaled", .mul, qp, constant: ConstantTensor(shape: [1], floats: [1 / Float(keyDim).squareRoot()]))

        // Keras' _build_attention_equation on the projected rank.
        let target = letters(0..<rank)
        let batchDims = (0..<rank).filter { !attnAxes.contains($0) && $0 != rank - 1 }
        var source = "", offset = rank
        let tchars = Array(target.unicodeScalars)
        for i in 0..<rank {
            if batchDims.contains(i) || i == rank - 1 { source.unicodeScalars.append(tchars[i]) } else {
                source += letters(offset..<(offset + 1)); offset += 1
            }
        }
        let schars = Array(source.unicodeScalars)
        var product = String.UnicodeScalarView()
        for i in batchDims { product.append(tchars[i]) }
        for i in attnAxes { product.append(tchars[i]) }
        for i in attnAxes { product.append(schars[i]) }
        let productString = String(product)
        let dotEq = source + "," + target + "->" + productString
        let combineEq = productString + "," + source + "->" + target
        var scores = chain.add("scores", .einsum(equation: dotEq), [kp, qs])
        // Scores shape: batch dims (of the query projection), query attention sizes, key attention sizes.
        let qps = Array(qt.shape.dropLast()) + [heads, keyDim], kps = Array(kt.shape.dropLast()) + [heads, keyDim]
        let scoreShape = batchDims.map { qps[$0] } + attnAxes.map { qps[$0] } + attnAxes.map { kps[$0] }
        if causal {
            guard attnAxes.count == 1 else {
                throw ctx.unsupported("use_causal_mask with several attention axes", hint: "Keras defines the causal mask for one attention axis")
            }
            let tq = qt.shape[1], tv = vt.shape[1]
            guard let n = checkedProduct([tq, tv]), n <= 1 << 28 else { throw ctx.unsupported("a causal mask of \(tq)×\(tv) is too large", hint: "use shorter sequences") }
            scores = appendCausalMask(&chain, scores: scores, rows: tq, columns: tv)
        }
        let scoresOut = ctx.outputNames.count > 1 ? ctx.outputNames[1] : nil
        let weights: String
        if attnAxes.count == 1 {
            weights = chain.add("weights", .softmax(axis: -1), [scores], output: scoresOut)
        } else {
            let n = attnAxes.count
            guard let flat = checkedProduct(Array(scoreShape.suffix(n))) else { throw ctx.unsupported("attention too large", hint: "check the model") }
            let merged = chain.add("scores_merged", .reshapeND(shape: Array(scoreShape.dropLast(n)) + [flat]), [scores])
            let sm = chain.add("weights_merged", .softmax(axis: -1), [merged])
            weights = chain.add("weights", .reshapeND(shape: scoreShape), [sm], output: scoresOut)
        }
        let attended = chain.add("combine", .einsum(equation: combineEq), [weights, vp])
        // Output projection: free dims of the query, bound (heads, value_dim), output dims.
        let free = qt.rank - 1
        let outEq = letters(0..<(free + 2)) + "," + letters(free..<(free + 2 + outShape.count)) + "->"
            + letters(0..<free) + letters((free + 2)..<(free + 2 + outShape.count))
        let okernel = try read("attention_output/kernel", [heads, valueDim] + outShape)
        let obias = useBias ? try read("attention_output/bias", outShape) : nil
        let k2 = chain.constant("output_kernel", okernel)
        var nodes = chain.nodes
        let projected = ctx.nodeName + "__output"
        if let obias {
            nodes.append(Node(name: projected, op: .einsum(equation: outEq), inputs: [attended, k2], outputs: [projected]))
            nodes.append(Node(name: ctx.nodeName, op: .binary(.add), inputs: [projected], outputs: [ctx.outputNames[0]], weights: ["y": obias]))
        } else {
            nodes.append(Node(name: ctx.nodeName, op: .einsum(equation: outEq), inputs: [attended, k2], outputs: [ctx.outputNames[0]]))
        }
        return nodes
    }
}
