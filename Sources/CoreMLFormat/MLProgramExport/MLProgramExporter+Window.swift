// IR window ops beyond conv2d / pool2d → MIL (issue 11): conv1d and pool1d (`conv`, `max_pool`,
// `avg_pool` on rank-3 NCW), deconv1d and deconv2d (`conv_transpose`). The MIL ops are
// channels-first (coremltools/converters/mil/mil/ops/defs/iOS15/conv.py, pool.py): a rank-3 NWC
// tensor is transposed to NCW ([0, 2, 1]) before and back after; deconv2d uses the NCHW twins
// of the rank-4 writer.
import MLGraph

extension MILExportSession {
    /// MIL (`pad_type`, `pad`) of an N-D window op: `pad` is [before₀, after₀, before₁, …].
    static func milPadding(_ p: SpatialPadding, rank: Int) -> (String, [Int]) {
        switch p {
        case .valid: return ("valid", [Int](repeating: 0, count: 2 * rank))
        case .same: return ("same", [Int](repeating: 0, count: 2 * rank))
        case let .explicit(before, after): return ("custom", zip(before, after).flatMap { [$0.0, $0.1] })
        }
    }

    /// The inputs of a channels-first MIL `conv` of `x` with `weightVar`, constants named after
    /// `nm`, and the node's optional "bias" weight.
    mutating func convInputs(_ nm: String, node: Node, x: String, weightVar: String, strides: [Int], pad: (String, [Int]),
                             dilations: [Int], groups: Int) throws -> [(String, [String])] {
        var ins: [(String, [String])] = [
            ("x", [x]), ("weight", [weightVar]),
            ("strides", [b.constInts(nm + "_strides_0", strides)]),
            ("pad_type", [b.constString(nm + "_pad_type_0", pad.0)]),
            ("pad", [b.constInts(nm + "_pad_0", pad.1)]),
            ("dilations", [b.constInts(nm + "_dilations_0", dilations)]),
            ("groups", [b.constInt(nm + "_groups_0", groups)]),
        ]
        if let bias = try weight(node, "bias") { ins.append(("bias", [bias])) }
        return ins
    }

    /// The MIL op type (`max_pool` / `avg_pool`) and inputs of a channels-first pool of `x`, with
    /// its constants named after `nm`; `avg_pool` excludes padding from the average (Core ML's and
    /// Keras' convention), `ceil_mode` is false.
    mutating func poolOp(_ nm: String, x: String, kind: PoolKind, kernel: [Int], strides: [Int],
                         pad: (String, [Int])) -> (type: String, inputs: [(String, [String])]) {
        var ins: [(String, [String])] = [
            ("x", [x]), ("kernel_sizes", [b.constInts(nm + "_kernel_sizes_0", kernel)]),
            ("strides", [b.constInts(nm + "_strides_0", strides)]),
            ("pad_type", [b.constString(nm + "_pad_type_0", pad.0)]),
            ("pad", [b.constInts(nm + "_pad_0", pad.1)]),
            ("ceil_mode", [b.constBool(nm + "_ceil_mode_0", false)]),
        ]
        if kind == .average { ins.append(("exclude_padding_from_average", [b.constBool(nm + "_exclude_padding_from_average_0", true)])) }
        return (kind == .max ? "max_pool" : "avg_pool", ins)
    }

    /// Rank-3 `t` [N, W, C] as an NCW variable (a `transpose` of its IR form).
    mutating func ncw(_ t: String, node: Node) throws -> String {
        let x = try value(t, node: node.name)
        let ty = try irType(t)
        guard ty.rank == 3 else { throw unsupported(node, "input '\(t)' of shape \(ty.shape) is not rank 3 [N, W, C]") }
        let name = b.fresh(MILProgramBuilder.sanitize(t) + "_ncw" + suffix)
        return b.op("transpose", name: name, inputs: [("x", [x]), ("perm", [b.constInts(name + "_perm_0", [0, 2, 1])])],
                    outputs: [(name, MILProgramBuilder.tensorType(try scalar(ty.elementType, node: node.name), [ty.shape[0], ty.shape[2], ty.shape[1]]))])[0]
    }

    /// Stores NCW variable `v` as rank-3 IR output `out` (transposed back to NWC).
    mutating func fromNCW(_ v: String, out: String, node: Node) throws {
        let name = varName(out)
        b.op("transpose", name: name, inputs: [("x", [v]), ("perm", [b.constInts(name + "_perm_0", [0, 2, 1])])],
             outputs: [(name, try milType(out, node: node.name))])
        irVar[out] = name
    }

    func ncwType(_ out: String, node: Node) throws -> Spec.MILSpec.ValueType {
        let ty = try irType(out)
        guard ty.rank == 3 else { throw unsupported(node, "output '\(out)' of shape \(ty.shape) is not rank 3 [N, W, C]") }
        return MILProgramBuilder.tensorType(try scalar(ty.elementType, node: node.name), [ty.shape[0], ty.shape[2], ty.shape[1]])
    }

    /// Lowers the window ops of this file; false when `node` is none of them.
    mutating func lowerWindow(_ node: Node) throws -> Bool {
        let nm = MILProgramBuilder.sanitize(node.name)
        switch node.op {
        case let .conv1d(a):
            guard let w = try weight(node, "weight") else { throw unsupported(node, "conv1d without weight \"weight\"") }
            let x = try ncw(node.inputs[0], node: node)
            let out = node.outputs[0]
            let pad = Self.milPadding(a.padding, rank: 1)
            let ins = try convInputs(nm, node: node, x: x, weightVar: w, strides: a.strides, pad: pad, dilations: a.dilations, groups: a.groups)
            let type = try ncwType(out, node: node)
            let convName = b.fresh(nm + "_conv" + suffix)
            var v = b.op("conv", name: convName, inputs: ins, outputs: [(convName, type)])[0]
            if let act = a.activation, !act.isIdentity {
                v = try activation(act, x: v, type: type, node: node, outName: b.fresh(nm + "_act" + suffix))
            }
            try fromNCW(v, out: out, node: node)
            return true

        case let .pool1d(a):
            let x = try ncw(node.inputs[0], node: node)
            let out = node.outputs[0]
            let pool = poolOp(nm, x: x, kind: a.kind, kernel: a.kernel, strides: a.strides, pad: Self.milPadding(a.padding, rank: 1))
            let name = b.fresh(nm + "_pool" + suffix)
            b.op(pool.type, name: name, inputs: pool.inputs, outputs: [(name, try ncwType(out, node: node))])
            try fromNCW(name, out: out, node: node)
            return true

        case let .deconv1d(a):
            let inW = try irType(node.inputs[0]).shape
            guard inW.count == 3 else { throw unsupported(node, "deconv1d input of shape \(inW) (expected [N, W, C])") }
            let x = try ncw(node.inputs[0], node: node)
            let out = node.outputs[0]
            let type = try ncwType(out, node: node)
            let o = try irType(out).shape
            let v = try convTranspose(node, x: x, type: type, outShape: [o[0], o[2], o[1]], kernel: a.kernel, strides: a.strides, dilations: a.dilations,
                                      outputPadding: a.outputPadding, input: [inW[1]], output: [a.outputSize(inW[1], axis: 0)],
                                      origin: [a.cropOrigin(inW[1], axis: 0)], groups: a.groups, activation: a.activation)
            try fromNCW(v, out: out, node: node)
            return true

        case let .deconv2d(a):
            let inS = try irType(node.inputs[0]).shape
            guard inS.count == 4 else { throw unsupported(node, "deconv2d input of shape \(inS) (expected [N, H, W, C])") }
            let x = try nchw(node.inputs[0], node: node.name)
            let out = node.outputs[0]
            let outHW = [deconvOutputSize(inS[1], axis: 0, a), deconvOutputSize(inS[2], axis: 1, a)]
            var origin = [0, 0]
            for i in 0..<2 {
                let full = (inS[1 + i] - 1) * a.strides[i] + (a.kernel[i] - 1) * a.dilations[i] + 1 + a.outputPadding[i]
                switch a.padding {
                case .valid: origin[i] = 0
                case .same: origin[i] = max(full - outHW[i], 0) / 2
                case let .explicit(t, _, l, _): origin[i] = i == 0 ? t : l
                }
            }
            let type = try milType(out, nchw: true, node: node.name)
            let v = try convTranspose(node, x: x, type: type, outShape: Self.toNCHW(try irType(out).shape), kernel: a.kernel, strides: a.strides,
                                      dilations: a.dilations, outputPadding: a.outputPadding, input: [inS[1], inS[2]], output: outHW, origin: origin,
                                      groups: a.groups, activation: a.activation, outName: nchwName(out))
            nchwVar[out] = v
            return true

        case let .recurrent(a):
            try lowerRecurrent(node, a)
            return true

        case let .split(a):
            // MIL split (ops/defs/iOS15/tensor_operation.py): num_splits or split_sizes, axis.
            let x = try value(node.inputs[0], node: node.name)
            var ins: [(String, [String])] = [("x", [x]), ("axis", [b.constInt(nm + "_axis_0", a.axis)])]
            if let sizes = a.splitSizes {
                ins.append(("split_sizes", [b.constInts(nm + "_split_sizes_0", sizes)]))
            } else if let k = a.numSplits {
                ins.append(("num_splits", [b.constInt(nm + "_num_splits_0", k)]))
            } else {
                throw unsupported(node, "split without numSplits or splitSizes")
            }
            var outs: [(String, Spec.MILSpec.ValueType)] = []
            for t in node.outputs { outs.append((varName(t), try milType(t, node: node.name))) }
            let names = b.op("split", name: outs.first?.0 ?? nm, inputs: ins, outputs: outs)
            for (t, v) in zip(node.outputs, names) { irVar[t] = v }
            return true

        case let .sequenceMask(maskValue):
            // mask[n, t] = 1 where any element of x[n, t, …] ≠ value: not_equal → cast → reduce_max.
            let t = node.inputs[0], out = node.outputs[0]
            let ty = try irType(t)
            guard ty.elementType.isFloat else { throw unsupported(node, "masks of \(ty.elementType) tensors (cast to float first)") }
            let x = try value(t, node: node.name)
            let ne = b.fresh(nm + "_not_equal")
            b.op("not_equal", name: ne, inputs: [("x", [x]), ("y", [floatScalar(nm + "_y_0", maskValue)])],
                 outputs: [(ne, MILProgramBuilder.tensorType(.bool, ty.shape))])
            let name = ty.rank == 2 ? varName(out) : b.fresh(nm + "_cast" + suffix)
            b.op("cast", name: name, inputs: [("x", [ne]), ("dtype", [b.constString(nm + "_dtype_0", compute == .float16 ? "fp16" : "fp32")])],
                 outputs: [(name, MILProgramBuilder.tensorType(compute, ty.shape))])
            if ty.rank == 2 { irVar[out] = name; return true }
            let r = varName(out)
            b.op("reduce_max", name: r, inputs: [("x", [name]), ("axes", [b.constInts(nm + "_axes_0", Array(2..<ty.rank))]),
                                                ("keep_dims", [b.constBool(nm + "_keep_dims_0", false)])],
                 outputs: [(r, try milType(out, node: node.name))])
            irVar[out] = r
            return true

        case .applyMask:
            // y = x · mask[n, t] broadcast over the feature axes (mask reshaped to [N, T, 1, …]).
            guard node.inputs.count == 2 else { throw unsupported(node, "applyMask needs x and mask") }
            let xs = try irType(node.inputs[0]).shape, ms = try irType(node.inputs[1]).shape
            guard xs.count >= 2, ms.count == 2 else { throw unsupported(node, "x of shape \(xs) with mask of shape \(ms); expected [N, T, …] and [N, T]") }
            let x = try value(node.inputs[0], node: node.name)
            var m = try value(node.inputs[1], node: node.name)
            if xs.count > 2 {
                let e = b.fresh(nm + "_mask_expanded" + suffix)
                m = b.op("reshape", name: e, inputs: [("x", [m]), ("shape", [b.constInts(e + "_shape_0", ms + [Int](repeating: 1, count: xs.count - 2))])],
                         outputs: [(e, MILProgramBuilder.tensorType(compute, ms + [Int](repeating: 1, count: xs.count - 2)))])[0]
            }
            let out = node.outputs[0], name = varName(out)
            b.op("mul", name: name, inputs: [("x", [x]), ("y", [m])], outputs: [(name, try milType(out, node: node.name))])
            irVar[out] = name
            return true

        default:
            return false
        }
    }

    /// MIL `conv_transpose` on channels-first `x` with explicit (`custom`) padding: per spatial
    /// axis the full output (in−1)·stride + (k−1)·dilation + 1 is cropped by `origin` at the
    /// start and by the rest at the end, so that `output` − `outputPadding` elements remain;
    /// output padding is declared through `output_shape` (extra elements at the end, as
    /// coremltools' and mlconv's readers take it). Weight: the IR's [Cin, Cout/groups, k…].
    mutating func convTranspose(_ node: Node, x: String, type: Spec.MILSpec.ValueType, outShape: [Int], kernel: [Int], strides: [Int], dilations: [Int],
                                outputPadding: [Int], input: [Int], output: [Int], origin: [Int], groups: Int,
                                activation act: Activation?, outName: String? = nil) throws -> String {
        let nm = MILProgramBuilder.sanitize(node.name)
        guard let w = try weight(node, "weight") else { throw unsupported(node, "transposed convolution without weight \"weight\"") }
        var pads: [Int] = []
        for i in input.indices {
            let full = (input[i] - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1
            let before = origin[i], after = full - (output[i] - outputPadding[i]) - origin[i]
            guard before >= 0, after >= 0 else {
                throw unsupported(node, "transposed convolution whose output (\(output[i]) on spatial axis \(i)) is larger than its "
                    + "full size \(full) plus output padding; MIL conv_transpose crops only")
            }
            pads += [before, after]
        }
        var ins: [(String, [String])] = [
            ("x", [x]), ("weight", [w]),
            ("pad_type", [b.constString(nm + "_pad_type_0", "custom")]),
            ("pad", [b.constInts(nm + "_pad_0", pads)]),
            ("strides", [b.constInts(nm + "_strides_0", strides)]),
            ("dilations", [b.constInts(nm + "_dilations_0", dilations)]),
            ("groups", [b.constInt(nm + "_groups_0", groups)]),
        ]
        if let bias = try weight(node, "bias") { ins.append(("bias", [bias])) }
        if outputPadding.contains(where: { $0 != 0 }) {
            ins.append(("output_shape", [b.constInts(nm + "_output_shape_0", outShape)]))
        }
        let hasAct = act.map { !$0.isIdentity } ?? false
        let convName = !hasAct ? (outName ?? b.fresh(nm + "_conv_transpose" + suffix)) : b.fresh(nm + "_conv_transpose" + suffix)
        var v = b.op("conv_transpose", name: convName, inputs: ins, outputs: [(convName, type)])[0]
        if let act, hasAct { v = try activation(act, x: v, type: type, node: node, outName: outName ?? b.fresh(nm + "_act" + suffix)) }
        return v
    }
}
