// MARK: nnmath — NeuralNetwork v2 (rank-N) elementwise, comparison, logical, reduction and
// normalisation layers → IR ops, with the semantics NeuralNetwork.proto's comments give them.
//
// Rank-N layers see Core ML's exact tensor shapes (EXACT_ARRAY_MAPPING); axes are counted on
// those shapes, negative axes from the end. Core ML NeuralNetwork tensors are float32: the bool
// results of comparisons and logical layers are cast back to float32 (1.0 / 0.0, as the proto
// says), and inputs of logical and where layers are read as bool by "≠ 0" (a `cast` to bool).
import MLGraph

extension LayerImporter {
    /// The parameterless elementwise v2 layers (`.simple` kinds) and their `Op.unary` function;
    /// tanh and copy are imported by LayerImporter itself.
    static let mathUnaryKinds: [Spec.SimpleLayerKind: UnaryFunction] = [
        .ceil: .ceil, .floor: .floor, .sign: .sign, .round: .round, .exp2: .exp2, .erf: .erf,
        .sin: .sin, .cos: .cos, .tan: .tan, .asin: .asin, .acos: .acos, .atan: .atan,
        .sinh: .sinh, .cosh: .cosh, .asinh: .asinh, .acosh: .acosh, .atanh: .atanh,
    ]

    /// The two-input broadcasting v2 layers (`.simple` kinds) and their `Op.binary` function.
    static let mathBinaryKinds: [Spec.SimpleLayerKind: BinaryFunction] = [
        .addBroadcastable: .add, .subtractBroadcastable: .sub, .multiplyBroadcastable: .mul,
        .divideBroadcastable: .realDiv, .maxBroadcastable: .maximum, .minBroadcastable: .minimum,
        .powBroadcastable: .pow,
    ]

    /// Whether `l` is a layer of this family (the layer types listed in CoreMLLayerOps under
    /// `nnmath`); `staticUnsupportedReason` lets them through to `convertMath`.
    static func isMathLayer(_ l: Spec.NeuralNetworkLayer.Layer) -> Bool {
        switch l {
        case let .simple(k): return mathUnaryKinds[k] != nil || mathBinaryKinds[k] != nil
        case .softmaxND, .argMax, .reduceND, .layerNormalization: return true
        case let .other(p):
            switch p {
            case .modBroadcastable, .floorDivBroadcastable, .equal, .notEqual, .lessThan, .lessEqual, .greaterThan,
                 .greaterEqual, .logicalAnd, .logicalOr, .logicalXor, .logicalNot, .whereBroadcastable, .argMin:
                return true
            default: return isRandomLayer(p)  // RandomImport.swift
            }
        default: return false
        }
    }

    /// Converts a layer for which `isMathLayer` is true; one IR tensor per output blob.
    func convertMath(_ layer: Spec.NeuralNetworkLayer, _ ins: [String]) throws -> [String] {
        let name = layer.name
        let out = layer.output.first ?? name
        func one() throws -> String {
            guard ins.count == 1 else { throw LayerImportFailure("expects 1 input, found \(ins.count)") }
            return ins[0]
        }
        func two() throws -> [String] {
            guard ins.count == 2 else { throw LayerImportFailure("expects 2 inputs, found \(ins.count)") }
            return ins
        }
        switch layer.layer {
        case let .simple(k):
            if let f = Self.mathUnaryKinds[k] {
                return [try b.emit(name, .unary(UnaryAttributes(f)), [one()], output: out)]
            }
            if let f = Self.mathBinaryKinds[k] {
                return [try b.emit(name, .binary(f), try two(), output: out)]
            }
        case let .softmaxND(axis):
            let x = try one()
            return [try b.emit(name, .softmax(axis: try ndAxis(axis, of: x)), [x], output: out)]
        case let .argMax(axis, removeDim):
            return [try argReduce(max: true, axis: axis, removeDim: removeDim, one(), name: name, out: out)]
        case let .reduceND(op, p):
            return [try reduceND(op, p, one(), name: name, out: out)]
        case let .layerNormalization(p):
            return [try layerNormalization(p, one(), name: name, out: out)]
        case let .other(p):
            switch p {
            case .modBroadcastable: return [try b.emit(name, .binary(.mod), try two(), output: out)]
            case .floorDivBroadcastable: return [try b.emit(name, .binary(.floorDiv), try two(), output: out)]
            case let .equal(q): return [try comparison(.equal, alpha: q.alpha, ins, name: name, out: out)]
            case let .notEqual(q): return [try comparison(.notEqual, alpha: q.alpha, ins, name: name, out: out)]
            case let .lessThan(q): return [try comparison(.less, alpha: q.alpha, ins, name: name, out: out)]
            case let .lessEqual(q): return [try comparison(.lessEqual, alpha: q.alpha, ins, name: name, out: out)]
            case let .greaterThan(q): return [try comparison(.greater, alpha: q.alpha, ins, name: name, out: out)]
            case let .greaterEqual(q): return [try comparison(.greaterEqual, alpha: q.alpha, ins, name: name, out: out)]
            case .logicalAnd: return [try logical(.and, two(), name: name, out: out)]
            case .logicalOr: return [try logical(.or, two(), name: name, out: out)]
            case .logicalXor: return [try logical(.xor, two(), name: name, out: out)]
            case .logicalNot: return [try logical(.not, [one()], name: name, out: out)]
            case .whereBroadcastable:
                guard ins.count == 3 else { throw LayerImportFailure("expects 3 inputs (condition, x, y), found \(ins.count)") }
                let cond = try b.emit(name + "__condition", .cast(to: .bool), [ins[0]])
                return [try b.emit(name, .select, [cond, ins[1], ins[2]], output: out)]
            case let .argMin(q):
                return [try argReduce(max: false, axis: q.axis, removeDim: q.removeDim, one(), name: name, out: out)]
            case _ where Self.isRandomLayer(p):
                return [try randomLayer(p, ins, name: name, out: out)]  // RandomImport.swift
            default: break
            }
        default: break
        }
        throw LayerImportFailure("is not a layer of the elementwise / reduction family (internal dispatch error; please report it)")
    }

    // MARK: Axes

    /// Axis `axis` of Core ML's exact shape of `x` (negative counts from the end), in 0..<rank.
    /// - Throws: `LayerImportFailure` naming the axis and the rank when it is out of range.
    func ndAxis(_ axis: Int64, of x: String) throws -> Int {
        try requireExact()
        let rank = b.shape(x).count
        guard let a = Int(exactly: axis), a >= -rank, a < rank else {
            throw LayerImportFailure("has axis \(axis), out of range for its rank-\(rank) input (expected \(-rank)…\(rank - 1))")
        }
        return a < 0 ? a + rank : a
    }

    /// Axis-based rank-N layers need Core ML's exact shapes; in a RANK5_ARRAY_MAPPING network
    /// the IR tensors are the NHWC conversion of rank-5 blobs, whose axes are not the layer's.
    func requireExact() throws {
        guard b.exact else {
            throw LayerImportFailure("is an axis-based rank-N layer in a network with RANK5_ARRAY_MAPPING inputs; mlconv imports such layers "
                + "only in EXACT_ARRAY_MAPPING networks (specificationVersion ≥ 4, as coremltools ≥ 3 writes them)")
        }
    }

    // MARK: Comparison and logical layers

    /// `y = x1 op x2` with broadcasting, or `y = x1 op alpha` for one input; 1.0 / 0.0 out.
    private func comparison(_ f: CompareFunction, alpha: Float, _ ins: [String], name: String, out: String) throws -> String {
        let operands: [String]
        switch ins.count {
        case 2: operands = ins
        case 1:
            let c = try b.emit(name + "__alpha", .constant, [], weights: ["value": ConstantTensor(shape: [1], floats: [alpha])])
            operands = [ins[0], c]
        default: throw LayerImportFailure("expects 1 input (compared with alpha) or 2, found \(ins.count)")
        }
        let t = try b.emit(name + "__bool", .compare(f), operands)
        return try b.emit(name, .cast(to: .float32), [t], output: out)
    }

    /// Logical AND / OR / XOR / NOT: an input is false when it equals 0.0, else true; 1.0 / 0.0 out.
    private func logical(_ f: LogicalFunction, _ ins: [String], name: String, out: String) throws -> String {
        let bools = try ins.enumerated().map { try b.emit("\(name)__in\($0)", .cast(to: .bool), [$1]) }
        let t = try b.emit(name + "__bool", .logical(f), bools)
        return try b.emit(name, .cast(to: .float32), [t], output: out)
    }

    // MARK: Reductions

    /// argMax / argMin along `axis`: the index as float32. The axis is kept (size 1) unless
    /// `removeDim` and the input has rank > 1 (a rank-1 input gives [1] either way, per the proto).
    private func argReduce(max: Bool, axis: Int64, removeDim: Bool, _ x: String, name: String, out: String) throws -> String {
        let a = try ndAxis(axis, of: x)
        let attrs = ArgReduceAttributes(axis: a, keepDims: !removeDim || b.shape(x).count == 1)
        let t = try b.emit(name + "__index", max ? .argmax(attrs) : .argmin(attrs), [x])
        return try b.emit(name, .cast(to: .float32), [t], output: out)
    }

    /// reduceSum / Mean / Prod / Min / Max / L1 / L2 / LogSum / LogSumExp / SumSquare over `axes`
    /// (every axis with `reduceAll`); reduced axes are kept with size 1 (`keepDims`) or removed.
    /// Core ML has no rank-0 tensors: removing every axis gives shape [1]. LogSum is log(Σx).
    private func reduceND(_ op: Spec.ReduceNDOperation, _ p: Spec.ReduceNDLayerParams, _ x: String, name: String, out: String) throws -> String {
        try requireExact()
        let rank = b.shape(x).count
        let axes: [Int]
        if p.reduceAll {
            axes = Array(0..<rank)
        } else {
            guard !p.axes.isEmpty else { throw LayerImportFailure("has no axes and reduceAll false") }
            let resolved = try p.axes.map { try ndAxis($0, of: x) }
            guard Set(resolved).count == resolved.count else { throw LayerImportFailure("names an axis twice in axes \(p.axes)") }
            axes = resolved.sorted()
        }
        let function: ReduceFunction
        switch op {
        case .sum, .logSum: function = .sum
        case .mean: function = .mean
        case .prod: function = .prod
        case .min: function = .min
        case .max: function = .max
        case .l1: function = .l1Norm
        case .l2: function = .l2Norm
        case .logSumExp: function = .logSumExp
        case .sumSquare: function = .sumSquare
        default: throw LayerImportFailure("reduce operation \(op.rawValue) is unknown")
        }
        let removesAll = !p.keepDims && axes.count == rank
        let keep = p.keepDims || removesAll
        let last = op == .logSum || removesAll
        var t = try b.emit(last ? name + "__reduce" : name, .reduce(ReduceAttributes(function: function, axes: axes, keepDims: keep)),
                           [x], output: last ? nil : out)
        if op == .logSum {
            t = try b.emit(removesAll ? name + "__log" : name, .unary(UnaryAttributes(.log)), [t], output: removesAll ? nil : out)
        }
        if removesAll { t = try b.emit(name, .reshapeND(shape: [1]), [t], output: out) }
        return t
    }

    // MARK: Normalisation

    /// layerNormalization over the trailing `normalizedShape.count` axes, which must equal the
    /// input's trailing dimensions: gamma·(x − mean)/√(var + eps) + beta, population variance;
    /// gamma and beta have shape `normalizedShape`.
    private func layerNormalization(_ p: Spec.LayerNormalizationLayerParams, _ x: String, name: String, out: String) throws -> String {
        try requireExact()
        let s = b.shape(x)
        let n = try Checked.ints(p.normalizedShape, "normalizedShape", in: 1...Node.maxCountAttribute)
        guard !n.isEmpty, n.count <= s.count else {
            throw LayerImportFailure("has normalizedShape \(p.normalizedShape); expected 1…\(s.count) trailing dimensions of its input \(s)")
        }
        let trailing = Array(s.suffix(n.count))
        guard zip(trailing, n).allSatisfy({ $0 == $1 || $0 < 0 }) else {
            throw LayerImportFailure("has normalizedShape \(n) but its input's trailing dimensions are \(trailing)")
        }
        guard p.eps.isFinite, p.eps >= 0 else { throw LayerImportFailure("has eps \(p.eps); expected a finite value ≥ 0") }
        var w: [String: ConstantTensor] = [:]
        if let g = p.gamma, g.storedElementCount > 0 { w["gamma"] = try WeightImport.constant(g, shape: n, what: "gamma") }
        if let bt = p.beta, bt.storedElementCount > 0 { w["beta"] = try WeightImport.constant(bt, shape: n, what: "beta") }
        let axes = Array((s.count - n.count)..<s.count)
        return try b.emit(name, .layerNorm(LayerNormAttributes(axes: axes, epsilon: p.eps)), [x], output: out, weights: w)
    }
}
