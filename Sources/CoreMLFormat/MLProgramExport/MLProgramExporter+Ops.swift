// IR node → MIL ops. Each case names the MIL op(s) it writes; parameters follow the MIL op
// definitions (coremltools/converters/mil/mil/ops/defs/iOS15). Nodes without a lowering are
// refused with `MLProgramExportError.unsupportedOp`.
import MLGraph

extension MILExportSession {
    func unsupported(_ node: Node, _ reason: String) -> MLProgramExportError {
        .unsupportedOp(node: node.name, op: node.op.name, reason: reason)
    }

    /// The constant weight `role` of `node` as a MIL const in the compute precision.
    mutating func weight(_ node: Node, _ role: String, shape: [Int]? = nil) throws -> String? {
        guard let w = node.weights[role] else { return nil }
        return b.constFloats(MILProgramBuilder.sanitize(node.name) + "_" + role + (compute == .float16 ? "_to_fp16" : ""),
                             w.floats(), shape: shape ?? w.shape, as: compute)
    }

    mutating func floatScalar(_ base: String, _ v: Float) -> String {
        b.constFloats(base, [v], shape: [], as: compute)
    }

    mutating func lower(_ node: Node) throws {
        let nm = MILProgramBuilder.sanitize(node.name)
        switch node.op {
        case .identity:
            try alias(node)

        case let .conv2d(a):
            // MARK: residual add fusion (issue 12)
            guard a.residual == nil else {
                throw unsupported(node, "conv2d with a fused residual add (fuse_residual_add); export the graph before PassPipeline.inference")
            }
            let x = try nchw(node.inputs[0], node: node.name)
            let out = node.outputs[0]
            let pad: (String, [Int])
            switch a.padding {
            case .valid: pad = ("valid", [0, 0, 0, 0])
            case .same: pad = ("same", [0, 0, 0, 0])
            case let .explicit(t, bo, l, r): pad = ("custom", [t, bo, l, r])
            }
            let ins = try convInputs(nm, node: node, x: x, weightVar: try weight(node, "weight")!, strides: a.strides, pad: pad,
                                     dilations: a.dilations, groups: a.groups)
            let type = try milType(out, nchw: true, node: node.name)
            let hasAct = a.activation.map { !$0.isIdentity } ?? false
            let convName = hasAct ? b.fresh(nm + "_conv" + suffix) : nchwName(out)
            var v = b.op("conv", name: convName, inputs: ins, outputs: [(convName, type)])[0]
            if let act = a.activation, hasAct { v = try activation(act, x: v, type: type, node: node, outName: nchwName(out)) }
            nchwVar[out] = v

        case let .dense(a):
            let x = try value(node.inputs[0], node: node.name)
            let out = node.outputs[0]
            var ins: [(String, [String])] = [("x", [x]), ("weight", [try weight(node, "weight")!])]
            if let bias = try weight(node, "bias") { ins.append(("bias", [bias])) }
            let type = try milType(out, node: node.name)
            let hasAct = a.activation.map { !$0.isIdentity } ?? false
            let name = hasAct ? b.fresh(nm + "_linear" + suffix) : varName(out)
            var v = b.op("linear", name: name, inputs: ins, outputs: [(name, type)])[0]
            if let act = a.activation, hasAct { v = try activation(act, x: v, type: type, node: node, outName: varName(out)) }
            irVar[out] = v

        case let .batchNorm(a):
            let t = node.inputs[0], out = node.outputs[0]
            let ty = try irType(t)
            guard let mean = node.weights["mean"]?.floats(), let variance = node.weights["variance"]?.floats() else {
                throw unsupported(node, "batch norm without mean/variance weights")
            }
            let c = mean.count
            let gamma = node.weights["gamma"]?.floats() ?? [Float](repeating: 1, count: c)
            let beta = node.weights["beta"]?.floats() ?? [Float](repeating: 0, count: c)
            if ty.rank == 4 && a.axis == 3 {
                let x = try nchw(t, node: node.name)
                let name = nchwName(out)
                let wsfx = compute == .float16 ? "_to_fp16" : ""
                b.op("batch_norm", name: name, inputs: [
                    ("x", [x]),
                    ("mean", [b.constFloats(nm + "_mean" + wsfx, mean, shape: [c], as: compute)]),
                    ("variance", [b.constFloats(nm + "_variance" + wsfx, variance, shape: [c], as: compute)]),
                    ("gamma", [b.constFloats(nm + "_gamma" + wsfx, gamma, shape: [c], as: compute)]),
                    ("beta", [b.constFloats(nm + "_beta" + wsfx, beta, shape: [c], as: compute)]),
                    ("epsilon", [floatScalar(nm + "_epsilon" + wsfx, a.epsilon)]),
                ], outputs: [(name, try milType(out, nchw: true, node: node.name))])
                nchwVar[out] = name
            } else if a.axis >= 1 && a.axis < ty.rank {
                // y = x·s + (β − μ·s), s = γ/√(σ² + ε), broadcast along the last axis.
                var scale = [Float](repeating: 0, count: c), shift = [Float](repeating: 0, count: c)
                for i in 0..<c {
                    scale[i] = gamma[i] / (variance[i] + a.epsilon).squareRoot()
                    shift[i] = beta[i] - mean[i] * scale[i]
                }
                let x = try value(t, node: node.name)
                let type = try milType(out, node: node.name)
                let bshape = [c] + [Int](repeating: 1, count: ty.rank - 1 - a.axis)  // broadcasts along `axis`
                let mulName = b.fresh(nm + "_scale" + suffix)
                b.op("mul", name: mulName, inputs: [("x", [x]), ("y", [b.constFloats(nm + "_scale_y", scale, shape: bshape, as: compute)])], outputs: [(mulName, type)])
                let name = varName(out)
                b.op("add", name: name, inputs: [("x", [mulName]), ("y", [b.constFloats(nm + "_shift_y", shift, shape: bshape, as: compute)])], outputs: [(name, type)])
                irVar[out] = name
            } else {
                throw unsupported(node, "batch norm along axis \(a.axis) of a rank-\(ty.rank) tensor (the batch axis)")
            }

        case let .activation(act):
            try layoutAgnostic(node) { s, x, type, outName in
                try s.activation(act, x: x, type: type, node: node, outName: outName)
            }

        case let .clip(alpha, beta):
            try layoutAgnostic(node) { s, x, type, outName in
                s.b.op("clip", name: outName, inputs: [("x", [x]), ("alpha", [s.floatScalar(nm + "_alpha_0", alpha)]),
                                                       ("beta", [s.floatScalar(nm + "_beta_0", beta)])], outputs: [(outName, type)])[0]
            }

        case let .softmax(axis):
            let x = try value(node.inputs[0], node: node.name)
            let out = node.outputs[0], name = varName(out)
            b.op("softmax", name: name, inputs: [("x", [x]), ("axis", [b.constInt(nm + "_axis_0", axis)])],
                 outputs: [(name, try milType(out, node: node.name))])
            irVar[out] = name

        case let .pool2d(a):
            let x = try nchw(node.inputs[0], node: node.name)
            let out = node.outputs[0], name = nchwName(out)
            let pad: (String, [Int])
            switch a.padding {
            case .valid: pad = ("valid", [0, 0, 0, 0])
            case .same: pad = ("same", [0, 0, 0, 0])
            case let .explicit(t, bo, l, r): pad = ("custom", [t, bo, l, r])
            }
            let pool = poolOp(nm, x: x, kind: a.kind, kernel: a.kernel, strides: a.strides, pad: pad)
            b.op(pool.type, name: name, inputs: pool.inputs, outputs: [(name, try milType(out, nchw: true, node: node.name))])
            nchwVar[out] = name

        case let .globalPool2d(kind, keepDims):
            let x = try nchw(node.inputs[0], node: node.name)
            let out = node.outputs[0]
            let name = keepDims ? nchwName(out) : varName(out)
            b.op(kind == .max ? "reduce_max" : "reduce_mean", name: name, inputs: [
                ("x", [x]), ("axes", [b.constInts(nm + "_axes_0", [2, 3])]), ("keep_dims", [b.constBool(nm + "_keep_dims_0", keepDims)]),
            ], outputs: [(name, try milType(out, nchw: keepDims, node: node.name))])
            if keepDims { nchwVar[out] = name } else { irVar[out] = name }

        case let .pad(a):
            let t = node.inputs[0], out = node.outputs[0]
            let ty = try irType(t)
            let mode: String
            switch a.mode {
            case .constant: mode = "constant"
            case .reflect: mode = "reflect"
            case .edge: mode = "replicate"
            }
            let useNCHW = ty.rank == 4 && a.pads.count == 4
            let pads = useNCHW ? [a.pads[0], a.pads[3], a.pads[1], a.pads[2]] : a.pads
            if mode != "constant", pads.dropLast(2).contains(where: { $0.contains { $0 != 0 } }) {
                throw unsupported(node, "\(mode) padding of other than the two spatial axes (MIL pads the last two axes in that mode)")
            }
            let x = useNCHW ? try nchw(t, node: node.name) : try value(t, node: node.name)
            let name = useNCHW ? nchwName(out) : varName(out)
            let flat = (mode == "constant" ? pads : Array(pads.suffix(2))).flatMap { $0 }
            b.op("pad", name: name, inputs: [
                ("x", [x]), ("pad", [b.constInts(nm + "_pad_0", flat)]), ("mode", [b.constString(nm + "_mode_0", mode)]),
                ("constant_val", [floatScalar(nm + "_constant_val_0", a.value)]),
            ], outputs: [(name, try milType(out, nchw: useNCHW, node: node.name))])
            if useNCHW { nchwVar[out] = name } else { irVar[out] = name }

        case let .elementwise(kind):
            guard node.inputs.count >= 1 else { throw unsupported(node, "no inputs") }
            let ins = node.inputs
            let useNCHW = preferNCHW(ins)
            let out = node.outputs[0]
            let type = try milType(out, nchw: useNCHW, node: node.name)
            func get(_ s: inout MILExportSession, _ t: String) throws -> String { useNCHW ? try s.nchw(t, node: node.name) : try s.value(t, node: node.name) }
            let finalOut = useNCHW ? nchwName(out) : varName(out)
            if ins.count == 1 {
                let x = try get(&self, ins[0])
                b.op("identity", name: finalOut, inputs: [("x", [x])], outputs: [(finalOut, type)])
            } else {
                let milOp: String
                switch kind {
                case .add, .average: milOp = "add"
                case .subtract: milOp = "sub"
                case .multiply: milOp = "mul"
                case .maximum: milOp = "maximum"
                case .minimum: milOp = "minimum"
                }
                var acc = try get(&self, ins[0])
                for (k, t) in ins.dropFirst().enumerated() {
                    let last = k == ins.count - 2 && kind != .average
                    let name = last ? finalOut : b.fresh(nm + "_\(milOp)_\(k)" + suffix)
                    acc = b.op(milOp, name: name, inputs: [("x", [acc]), ("y", [try get(&self, t)])], outputs: [(name, type)])[0]
                }
                if kind == .average {
                    acc = b.op("mul", name: finalOut, inputs: [("x", [acc]), ("y", [floatScalar(nm + "_inv_count", 1 / Float(ins.count))])],
                               outputs: [(finalOut, type)])[0]
                }
            }
            if useNCHW { nchwVar[out] = finalOut } else { irVar[out] = finalOut }

        case let .binary(fn):
            let out = node.outputs[0]
            let yWeight = node.weights["y"]
            if node.inputs.count == 1, let yw = yWeight {
                let scalarY = yw.elementCount == 1
                let t = node.inputs[0]
                let rank = try irType(t).rank
                let useNCHW = scalarY && nchwVar[t] != nil && rank == 4
                let x = useNCHW ? try nchw(t, node: node.name) : try value(t, node: node.name)
                let y = b.constFloats(nm + "_y_0", yw.floats(), shape: scalarY ? [] : yw.shape, as: compute)
                let name = useNCHW ? nchwName(out) : varName(out)
                b.op(fn.rawValue, name: name, inputs: [("x", [x]), ("y", [y])], outputs: [(name, try milType(out, nchw: useNCHW, node: node.name))])
                if useNCHW { nchwVar[out] = name } else { irVar[out] = name }
            } else if node.inputs.count == 2 {
                let useNCHW = preferNCHW(node.inputs)
                let x = useNCHW ? try nchw(node.inputs[0], node: node.name) : try value(node.inputs[0], node: node.name)
                let y = useNCHW ? try nchw(node.inputs[1], node: node.name) : try value(node.inputs[1], node: node.name)
                let name = useNCHW ? nchwName(out) : varName(out)
                b.op(fn.rawValue, name: name, inputs: [("x", [x]), ("y", [y])], outputs: [(name, try milType(out, nchw: useNCHW, node: node.name))])
                if useNCHW { nchwVar[out] = name } else { irVar[out] = name }
            } else {
                throw unsupported(node, "binary op needs two inputs or one input and weight \"y\"")
            }

        case .reshape, .reshapeND:
            let x = try value(node.inputs[0], node: node.name)
            let out = node.outputs[0], name = varName(out)
            let shape = try irType(out).shape
            b.op("reshape", name: name, inputs: [("x", [x]), ("shape", [b.constInts(nm + "_shape_0", shape)])],
                 outputs: [(name, try milType(out, node: node.name))])
            irVar[out] = name

        case let .transpose(perm):
            let x = try value(node.inputs[0], node: node.name)
            let out = node.outputs[0], name = varName(out)
            b.op("transpose", name: name, inputs: [("x", [x]), ("perm", [b.constInts(nm + "_perm_0", perm)])],
                 outputs: [(name, try milType(out, node: node.name))])
            irVar[out] = name

        case let .concat(axis):
            let out = node.outputs[0]
            let rank = try irType(out).rank
            let useNCHW = preferNCHW(node.inputs)
            var ax = axis < 0 ? axis + rank : axis
            if useNCHW { ax = [0, 2, 3, 1][ax] }
            var xs: [String] = []
            for t in node.inputs { xs.append(useNCHW ? try nchw(t, node: node.name) : try value(t, node: node.name)) }
            let name = useNCHW ? nchwName(out) : varName(out)
            b.op("concat", name: name, inputs: [("values", xs), ("axis", [b.constInt(nm + "_axis_0", ax)]),
                                               ("interleave", [b.constBool(nm + "_interleave_0", false)])],
                 outputs: [(name, try milType(out, nchw: useNCHW, node: node.name))])
            if useNCHW { nchwVar[out] = name } else { irVar[out] = name }

        case let .matmul(a):
            let x = try value(node.inputs[0], node: node.name)
            let y: String
            if node.inputs.count == 2 { y = try value(node.inputs[1], node: node.name) }
            else if let w = try weight(node, "y") { y = w }
            else { throw unsupported(node, "matmul needs a second input or weight \"y\"") }
            let out = node.outputs[0], name = varName(out)
            b.op("matmul", name: name, inputs: [("x", [x]), ("y", [y]),
                                               ("transpose_x", [b.constBool(nm + "_transpose_x_0", a.transposeX)]),
                                               ("transpose_y", [b.constBool(nm + "_transpose_y_0", a.transposeY)])],
                 outputs: [(name, try milType(out, node: node.name))])
            irVar[out] = name

        case let .reduce(a):
            let x = try value(node.inputs[0], node: node.name)
            let out = node.outputs[0], name = varName(out)
            var ins: [(String, [String])] = [("x", [x]), ("keep_dims", [b.constBool(nm + "_keep_dims_0", a.keepDims)])]
            if !a.axes.isEmpty { ins.append(("axes", [b.constInts(nm + "_axes_0", a.axes)])) }
            b.op(a.function.milName, name: name, inputs: ins, outputs: [(name, try milType(out, node: node.name))])
            irVar[out] = name

        case let .upsample2d(a) where a.mode == .nearest:
            let x = try nchw(node.inputs[0], node: node.name)
            let out = node.outputs[0], name = nchwName(out)
            b.op("upsample_nearest_neighbor", name: name, inputs: [
                ("x", [x]), ("scale_factor_height", [b.constInt(nm + "_scale_factor_height_0", a.scale[0])]),
                ("scale_factor_width", [b.constInt(nm + "_scale_factor_width_0", a.scale[1])]),
            ], outputs: [(name, try milType(out, nchw: true, node: node.name))])
            nchwVar[out] = name

        case let .cast(to):
            let x = try value(node.inputs[0], node: node.name)
            let out = node.outputs[0]
            let target = try scalar(to, node: node.name)
            if try scalar(try irType(node.inputs[0]).elementType, node: node.name) == target { try alias(node); return }
            let dtype: String
            switch target {
            case .float16: dtype = "fp16"
            case .float32: dtype = "fp32"
            case .int32: dtype = "int32"
            case .bool: dtype = "bool"
            case .string: throw unsupported(node, "cast to string")
            }
            let name = varName(out)
            b.op("cast", name: name, inputs: [("x", [x]), ("dtype", [b.constString(nm + "_dtype_0", dtype)])],
                 outputs: [(name, try milType(out, node: node.name))])
            irVar[out] = name

        case .constant:
            guard let w = node.weights["value"], let out = node.outputs.first else { throw unsupported(node, "constant without weight \"value\"") }
            let ty = try irType(out)
            guard ty.elementType.isFloat else { throw unsupported(node, "constants of element type \(ty.elementType)") }
            irVar[out] = b.constFloats(varName(out), w.floats(), shape: ty.shape, as: compute)

        case let .unary(a):
            let f = a.function
            try layoutAgnostic(node) { s, x, type, outName in
                var v = x
                if a.scale != 1 {
                    let n = s.b.fresh(nm + "_scale" + s.suffix)
                    v = s.b.op("mul", name: n, inputs: [("x", [v]), ("y", [s.floatScalar(nm + "_scale_y", a.scale)])], outputs: [(n, type)])[0]
                }
                if a.shift != 0 {
                    let n = s.b.fresh(nm + "_shift" + s.suffix)
                    v = s.b.op("add", name: n, inputs: [("x", [v]), ("y", [s.floatScalar(nm + "_shift_y", a.shift)])], outputs: [(n, type)])[0]
                }
                switch f {
                case .neg:
                    return s.b.op("mul", name: outName, inputs: [("x", [v]), ("y", [s.floatScalar(nm + "_neg_y", -1)])], outputs: [(outName, type)])[0]
                case .rsqrt, .inverse, .log:
                    return s.b.op(f.rawValue, name: outName, inputs: [("x", [v]), ("epsilon", [s.floatScalar(nm + "_epsilon_0", a.epsilon)])], outputs: [(outName, type)])[0]
                case .threshold:
                    return s.b.op("threshold", name: outName, inputs: [("x", [v]), ("alpha", [s.floatScalar(nm + "_alpha_0", a.alpha)])], outputs: [(outName, type)])[0]
                case .power:
                    return s.b.op("pow", name: outName, inputs: [("x", [v]), ("y", [s.floatScalar(nm + "_y_0", a.alpha)])], outputs: [(outName, type)])[0]
                default:
                    return s.b.op(f.rawValue, name: outName, inputs: [("x", [v])], outputs: [(outName, type)])[0]
                }
            }

        case let .layerNorm(a):
            let x = try value(node.inputs[0], node: node.name)
            let out = node.outputs[0], name = varName(out)
            var ins: [(String, [String])] = [("x", [x]), ("epsilon", [floatScalar(nm + "_epsilon_0", a.epsilon)])]
            if !a.axes.isEmpty { ins.append(("axes", [b.constInts(nm + "_axes_0", a.axes)])) }
            if let g = try weight(node, "gamma") {
                ins.append(("gamma", [g]))
            } else if let be = node.weights["beta"] {
                // coremltools' layer_norm type inference reads gamma's shape whenever beta is given.
                ins.append(("gamma", [b.constFloats(nm + "_gamma", [Float](repeating: 1, count: be.elementCount), shape: be.shape, as: compute)]))
            }
            if let be = try weight(node, "beta") { ins.append(("beta", [be])) }
            b.op("layer_norm", name: name, inputs: ins, outputs: [(name, try milType(out, node: node.name))])
            irVar[out] = name

        case .embedding:
            // gather(table [vocab, D], indices int32 x, axis 0); the IR weight is [D, vocab].
            let t = node.inputs[0], out = node.outputs[0]
            guard let w = node.weights["weight"], w.shape.count == 2 else { throw unsupported(node, "embedding without a [D, vocab] weight") }
            let (d, vocab) = (w.shape[0], w.shape[1])
            let wf = w.floats()
            var table = [Float](repeating: 0, count: d * vocab)
            for i in 0..<d { for j in 0..<vocab { table[j * d + i] = wf[i * vocab + j] } }
            var idx = try value(t, node: node.name)
            let inTy = try irType(t)
            if inTy.elementType != .int32 {
                let n = b.fresh(nm + "_indices_int32")
                idx = b.op("cast", name: n, inputs: [("x", [idx]), ("dtype", [b.constString(n + "_dtype_0", "int32")])],
                           outputs: [(n, MILProgramBuilder.tensorType(.int32, inTy.shape))])[0]
            }
            let name = varName(out)
            b.op("gather", name: name, inputs: [("x", [b.constFloats(nm + "_table", table, shape: [vocab, d], as: compute)]),
                                               ("indices", [idx]), ("axis", [b.constInt(nm + "_axis_0", 0)])],
                 outputs: [(name, try milType(out, node: node.name))])
            irVar[out] = name

        case let .repeatVector(n):
            let t = node.inputs[0], out = node.outputs[0]
            let x = try value(t, node: node.name)
            let inShape = try irType(t).shape
            let e = b.fresh(nm + "_expanded" + suffix)
            b.op("expand_dims", name: e, inputs: [("x", [x]), ("axes", [b.constInts(nm + "_axes_0", [1])])],
                 outputs: [(e, MILProgramBuilder.tensorType(try scalar(try irType(t).elementType, node: node.name), [inShape[0], 1] + inShape.dropFirst()))])
            let name = varName(out)
            b.op("tile", name: name, inputs: [("x", [e]), ("reps", [b.constInts(nm + "_reps_0", [1, n] + [Int](repeating: 1, count: inShape.count - 1))])],
                 outputs: [(name, try milType(out, node: node.name))])
            irVar[out] = name

        case let .upsample2d(a):
            let mode: String
            switch a.mode {
            case .bilinearHalfPixel: mode = "UNALIGN_CORNERS"
            case .bilinearAlignCorners: mode = "STRICT_ALIGN_CORNERS"
            case .bilinearAsymmetric: mode = "DEFAULT"
            case .nearest: mode = "DEFAULT"
            }
            try resizeBilinear(node, mode: mode)

        case let .resize(a):
            guard a.method == .bilinear || a.samplingMode == .asymmetric else {
                throw unsupported(node, "nearest resize with sampling mode \(a.samplingMode.rawValue)")
            }
            if a.method == .nearest {
                let x = try nchw(node.inputs[0], node: node.name)
                let out = node.outputs[0], name = nchwName(out)
                let o = try irType(out).shape
                b.op("resize_nearest_neighbor", name: name, inputs: [("x", [x]), ("target_size_height", [b.constInt(nm + "_target_size_height_0", o[1])]),
                                                                   ("target_size_width", [b.constInt(nm + "_target_size_width_0", o[2])])],
                     outputs: [(name, try milType(out, nchw: true, node: node.name))])
                nchwVar[out] = name
            } else {
                let mode: String
                switch a.samplingMode {
                case .alignCorners: mode = "ALIGN_CORNERS"
                case .strictAlignCorners: mode = "STRICT_ALIGN_CORNERS"
                case .halfPixel: mode = "UNALIGN_CORNERS"
                case .asymmetric: mode = "DEFAULT"
                }
                try resizeBilinear(node, mode: mode)
            }

        case let .expandDims(axes):
            try shapeOp(node, "expand_dims", [("axes", b.constInts(nm + "_axes_0", axes))])

        case let .squeeze(axes):
            try shapeOp(node, "squeeze", axes.isEmpty ? [] : [("axes", b.constInts(nm + "_axes_0", axes))])

        case let .tile(reps):
            try shapeOp(node, "tile", [("reps", b.constInts(nm + "_reps_0", reps))])

        case let .sliceBySize(begin, size):
            try shapeOp(node, "slice_by_size", [("begin", b.constInts(nm + "_begin_0", begin)), ("size", b.constInts(nm + "_size_0", size))])

        case let .sliceByIndex(a):
            let r = a.begin.count
            func mask(_ m: [Bool]) -> [Bool] { m.isEmpty ? [Bool](repeating: false, count: r) : m }
            func bools(_ base: String, _ v: [Bool]) -> String {
                b.const(base, MILProgramBuilder.immediate(.bool, [v.count], .bools(.init(values: v))), MILProgramBuilder.tensorType(.bool, [v.count]))
            }
            try shapeOp(node, "slice_by_index", [
                ("begin", b.constInts(nm + "_begin_0", a.begin)), ("end", b.constInts(nm + "_end_0", a.end)),
                ("stride", b.constInts(nm + "_stride_0", a.stride)),
                ("begin_mask", bools(nm + "_begin_mask_0", mask(a.beginMask))), ("end_mask", bools(nm + "_end_mask_0", mask(a.endMask))),
                ("squeeze_mask", bools(nm + "_squeeze_mask_0", mask(a.squeezeMask))),
            ])

        case let .stack(axis):
            var xs: [String] = []
            for t in node.inputs { xs.append(try value(t, node: node.name)) }
            let out = node.outputs[0], name = varName(out)
            b.op("stack", name: name, inputs: [("values", xs), ("axis", [b.constInt(nm + "_axis_0", axis)])],
                 outputs: [(name, try milType(out, node: node.name))])
            irVar[out] = name

        case let .crop(crops):
            let x = try value(node.inputs[0], node: node.name)
            let out = node.outputs[0], name = varName(out)
            let outShape = try irType(out).shape
            guard crops.count == outShape.count else { throw unsupported(node, "crop needs one [before, after] pair per axis") }
            b.op("slice_by_size", name: name, inputs: [("x", [x]), ("begin", [b.constInts(nm + "_begin_0", crops.map { $0.first ?? 0 })]),
                                                     ("size", [b.constInts(nm + "_size_0", outShape)])],
                 outputs: [(name, try milType(out, node: node.name))])
            irVar[out] = name

        default:
            // MARK: issue 11 lowerings (MLProgramExporter+Window.swift, …)
            if try lowerWindow(node) { return }
            throw unsupported(node, "the ML program writer handles conv2d, conv1d, deconv1d, deconv2d, pool1d, dense, batchNorm, activations, clip, softmax, pool2d, "
                + "globalPool2d, pad, crop, elementwise, binary, unary, reshape, transpose, concat, matmul, reduce, layerNorm, "
                + "embedding, repeatVector, upsample2d, resize, expandDims, squeeze, tile, sliceBySize, sliceByIndex, stack, "
                + "constant, cast and identity; "
                + "write an .mlmodel (classic neural network) for this graph")
        }
    }

    /// A one-input op in the IR layout with extra parameters (already emitted consts).
    mutating func shapeOp(_ node: Node, _ type: String, _ params: [(String, String)]) throws {
        let x = try value(node.inputs[0], node: node.name)
        let out = node.outputs[0], name = varName(out)
        b.op(type, name: name, inputs: [("x", [x])] + params.map { ($0.0, [$0.1]) }, outputs: [(name, try milType(out, node: node.name))])
        irVar[out] = name
    }

    /// MIL `resize_bilinear` to the output's H and W (NCHW), with `mode` its sampling mode.
    mutating func resizeBilinear(_ node: Node, mode: String) throws {
        let nm = MILProgramBuilder.sanitize(node.name)
        let x = try nchw(node.inputs[0], node: node.name)
        let out = node.outputs[0], name = nchwName(out)
        let o = try irType(out).shape
        b.op("resize_bilinear", name: name, inputs: [
            ("x", [x]), ("target_size_height", [b.constInt(nm + "_target_size_height_0", o[1])]),
            ("target_size_width", [b.constInt(nm + "_target_size_width_0", o[2])]),
            ("sampling_mode", [b.constString(nm + "_sampling_mode_0", mode)]),
        ], outputs: [(name, try milType(out, nchw: true, node: node.name))])
        nchwVar[out] = name
    }

    /// Output = input: the output tensor shares the input's variables (an `identity` op only
    /// when the output is a feature, which needs its own name; see `run`).
    mutating func alias(_ node: Node) throws {
        guard let t = node.inputs.first, let out = node.outputs.first else { throw unsupported(node, "identity needs one input and one output") }
        if let v = irVar[t] { irVar[out] = v }
        if let v = nchwVar[t] { nchwVar[out] = v }
        if irVar[out] == nil && nchwVar[out] == nil { _ = try value(t, node: node.name) ; irVar[out] = irVar[t] }
    }

    /// One-input elementwise op computed in whichever layout its input has (NCHW preferred).
    mutating func layoutAgnostic(_ node: Node, _ body: (inout MILExportSession, String, Spec.MILSpec.ValueType, String) throws -> String) throws {
        let t = node.inputs[0], out = node.outputs[0]
        let rank = try irType(t).rank
        let useNCHW = nchwVar[t] != nil && rank == 4
        let x = useNCHW ? try nchw(t, node: node.name) : try value(t, node: node.name)
        let type = try milType(out, nchw: useNCHW, node: node.name)
        let name = useNCHW ? nchwName(out) : varName(out)
        let v = try body(&self, x, type, name)
        if useNCHW { nchwVar[out] = v } else { irVar[out] = v }
    }

    /// Emits `act` on `x`; the result is named `outName`.
    mutating func activation(_ act: Activation, x: String, type: Spec.MILSpec.ValueType, node: Node, outName: String) throws -> String {
        let nm = MILProgramBuilder.sanitize(node.name)
        func simple(_ s: inout MILExportSession, _ op: String, _ extra: [(String, [String])] = []) -> String {
            s.b.op(op, name: outName, inputs: [("x", [x])] + extra, outputs: [(outName, type)])[0]
        }
        switch act {
        case .relu: return simple(&self, "relu")
        case .sigmoid: return simple(&self, "sigmoid")
        case .tanh: return simple(&self, "tanh")
        case .softplus: return simple(&self, "softplus")
        case .softsign: return simple(&self, "softsign")
        case .swish: return simple(&self, "silu")
        case .exponential: return simple(&self, "exp")
        case let .clippedReLU(maxValue, slope, threshold) where slope == 0 && threshold == 0:
            guard let m = maxValue else { return simple(&self, "relu") }
            if m == 6 { return simple(&self, "relu6") }
            return simple(&self, "clip", [("alpha", [floatScalar(nm + "_alpha_0", 0)]), ("beta", [floatScalar(nm + "_beta_0", m)])])
        case let .leakyReLU(alpha):
            return simple(&self, "leaky_relu", [("alpha", [floatScalar(nm + "_alpha_0", alpha)])])
        case let .elu(alpha):
            return simple(&self, "elu", [("alpha", [floatScalar(nm + "_alpha_0", alpha)])])
        case let .gelu(approximate):
            return simple(&self, "gelu", [("mode", [b.constString(nm + "_mode_0", approximate ? "TANH_APPROXIMATION" : "EXACT")])])
        case let .hardSigmoid(alpha, beta):
            return simple(&self, "sigmoid_hard", [("alpha", [floatScalar(nm + "_alpha_0", alpha)]), ("beta", [floatScalar(nm + "_beta_0", beta)])])
        case let .linear(alpha, beta):
            if alpha == 1 && beta == 0 { return simple(&self, "identity") }
            return simple(&self, "linear_activation", [("alpha", [floatScalar(nm + "_alpha_0", alpha)]), ("beta", [floatScalar(nm + "_beta_0", beta)])])
        case let .thresholdedReLU(theta):
            return simple(&self, "thresholded_relu", [("alpha", [floatScalar(nm + "_alpha_0", theta)])])
        case let .scaledTanh(alpha, beta):
            return simple(&self, "scaled_tanh", [("alpha", [floatScalar(nm + "_alpha_0", alpha)]), ("beta", [floatScalar(nm + "_beta_0", beta)])])
        case .selu:
            // λ·elu(x, α) with Keras' constants.
            let e = b.fresh(nm + "_elu" + suffix)
            b.op("elu", name: e, inputs: [("x", [x]), ("alpha", [floatScalar(nm + "_alpha_0", 1.6732632423543772)])], outputs: [(e, type)])
            return b.op("mul", name: outName, inputs: [("x", [e]), ("y", [floatScalar(nm + "_scale_0", 1.0507009873554805)])], outputs: [(outName, type)])[0]
        default:
            throw unsupported(node, "activation \(act) has no ML program lowering in mlconv yet")
        }
    }
}
