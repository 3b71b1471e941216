import MLGraph

/// Keras 1's `Merge` layer (kept by Keras 2.0–2.1 in `keras/legacy/layers.py`), `mode`:
/// - `sum`, `mul`, `ave`, `max` → elementwise add / multiply / average / maximum;
/// - `concat` → concat on `concat_axis` (default −1);
/// - `dot` (two [N, D] inputs, `dot_axes` [1, 1]) → Σ a·b on the feature axis: [N, 1]
///   (`K.batch_dot` of two matrices keeps a unit axis);
/// - `cos` (likewise) → Σ a·b / max(√(Σa²·Σb²), 1e-7), then a unit axis: [N, 1, 1]
///   (Keras: `batch_dot(a, b) / max(sqrt(batch_dot(a, a)·batch_dot(b, b)), epsilon)`,
///   `expand_dims(…, 1)`).
/// Lambda or function modes (`mode_type` 'lambda' / 'function': Python code) and dot/cos on
/// other ranks or axes are unsupported configurations. As the first layer of a Keras 1
/// Sequential (a merge of models), `Keras1Config` turns the model functional first.
struct LegacyMergeConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.elementwise, .concat, .reduce, .unary, .reshape] }
    var classNames: [String] { ["Merge"] }
    var minimumInputCount: Int { 1 }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        if let t = ctx.value("mode_type")?.string, t != "raw" {
            throw ctx.unsupported("the merge mode is a Python \(t) (\(ctx.value("mode")?.string.map { String($0.prefix(40)) } ?? "?")), which cannot be converted",
                                  hint: "convert this layer with a `LayerHook` (`--custom-layer`), or replace it with a built-in merge mode")
        }
        let mode = try ctx.string("mode", default: "sum")
        if ctx.inputs.count == 1, mode != "dot", mode != "cos" { return [] }
        let out = ctx.outputNames[0], name = ctx.nodeName
        switch mode {
        case "sum", "mul", "ave", "max":
            let kind: ElementwiseKind = mode == "sum" ? .add : mode == "mul" ? .multiply : mode == "ave" ? .average : .maximum
            return [Node(name: name, op: .elementwise(kind), inputs: ctx.inputs, outputs: [out])]
        case "concat":
            let axis = try ctx.axis(try ctx.int("concat_axis", default: -1), rank: ctx.inputShape.count, key: "concat_axis")
            return [Node(name: name, op: .concat(axis: axis), inputs: ctx.inputs, outputs: [out])]
        case "dot", "cos":
            guard ctx.inputs.count == 2, ctx.inputTypes.allSatisfy({ $0.shape.count == 2 }), ctx.inputTypes[0].shape == ctx.inputTypes[1].shape else {
                throw ctx.unsupported("mode '\(mode)' is converted for two [batch, features] inputs of one shape; found \(ctx.inputTypes.map { formatShape($0.shape) }.joined(separator: ", "))",
                                      hint: "convert this layer with a `LayerHook`")
            }
            var axes = [1, 1]
            if let v = ctx.value("dot_axes") {
                if let i = v.int { axes = [i, i] } else if let a = v.array, a.count == 2, let x = a[0].int, let y = a[1].int { axes = [x, y] } else {
                    throw ctx.invalid("dot_axes", expected: "an integer or a pair of integers")
                }
            }
            guard axes.allSatisfy({ $0 == 1 || $0 == -1 }) else {
                throw ctx.unsupported("dot_axes \(axes) on [batch, features] inputs is not supported (only the feature axis)", hint: "use dot_axes=1")
            }
            let (a, b) = (ctx.inputs[0], ctx.inputs[1])
            let prod = name + "__product"
            let nodes = [Node(name: prod, op: .elementwise(.multiply), inputs: [a, b], outputs: [prod])]
            if mode == "dot" {
                return nodes + [Node(name: name, op: .reduce(ReduceAttributes(function: .sum, axes: [1], keepDims: true)), inputs: [prod], outputs: [out])]
            }
            let num = name + "__dot", sa = name + "__norm_a", sb = name + "__norm_b", n2 = name + "__norm2",
                den = name + "__denominator", clamped = name + "__clamped", inv = name + "__inverse", cos = name + "__cos"
            func reduce(_ f: ReduceFunction, _ x: String, _ y: String) -> Node {
                Node(name: y, op: .reduce(ReduceAttributes(function: f, axes: [1], keepDims: true)), inputs: [x], outputs: [y])
            }
            return nodes + [
                reduce(.sum, prod, num), reduce(.sumSquare, a, sa), reduce(.sumSquare, b, sb),
                Node(name: n2, op: .elementwise(.multiply), inputs: [sa, sb], outputs: [n2]),
                Node(name: den, op: .unary(UnaryAttributes(.sqrt)), inputs: [n2], outputs: [den]),
                Node(name: clamped, op: .unary(UnaryAttributes(.threshold, alpha: 1e-7)), inputs: [den], outputs: [clamped]),
                Node(name: inv, op: .unary(UnaryAttributes(.inverse, epsilon: 0)), inputs: [clamped], outputs: [inv]),
                Node(name: cos, op: .elementwise(.multiply), inputs: [num, inv], outputs: [cos]),
                Node(name: name, op: .reshape(targetShape: [1, 1]), inputs: [cos], outputs: [out]),
            ]
        default:
            throw ctx.unsupported("merge mode '\(mode)' is not supported", hint: "use sum, mul, ave, max, concat, dot or cos")
        }
    }
}
