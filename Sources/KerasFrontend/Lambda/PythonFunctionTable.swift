// The library functions a Lambda body or a TFOpLambda may call, with each library's own
// signature (parameter names, defaults) and their IR lowering. Signatures follow the public API
// documentation of tf_keras 2.x `keras.backend`, TensorFlow 2.x and Keras 3 `keras.ops`.

import MLGraph

/// Which library a called function belongs to (its signature and defaults differ by library).
enum PythonLibrary: String, Hashable {
    /// `keras.backend` / `tf.keras.backend` (conventionally imported as `K`).
    case backend
    /// TensorFlow (`tf.*`, `tf.math.*`, `tf.nn.*`, `tf.compat.v1.*`).
    case tensorflow
    /// Keras 3 `keras.ops` (NumPy-like).
    case ops
    /// Python builtins (`abs`, `pow`).
    case builtins
}

/// What a function does, independent of its library.
enum PythonFunctionKind: Hashable {
    case reduce(ReduceFunction)
    case unary(UnaryFunction)
    /// `K.sqrt`: sqrt(max(x, 0)).
    case backendSqrt
    case activation(Activation)
    case relu(backend: Bool)
    case elu
    case leakyReLU
    case gelu
    case softmax, logSoftmax
    case clip(keras2: Bool)
    case binary(BinaryFunction)
    case concat, stack, expandDims, squeeze, reshape, transpose, l2Normalize, tile, batchFlatten, matmul, pad
    case epsilon
}

struct PythonFunctionSpec {
    var parameters: [String]
    var defaults: [String: PythonConstant] = [:]
    /// Other accepted keyword names → parameter.
    var aliases: [String: String] = [:]
    var kind: PythonFunctionKind
}

enum PythonFunctionTable {
    /// The library and bare function name of a dotted callee, nil for anything else.
    static func resolve(_ dotted: String) -> (PythonLibrary, String)? {
        var parts = dotted.split(separator: ".").map(String.init)
        guard let last = parts.popLast() else { return nil }
        let prefix = parts.joined(separator: ".")
        switch prefix {
        case "": return ["abs", "pow"].contains(last) ? (.builtins, last) : nil
        case "K", "backend", "keras.backend", "tf.keras.backend", "tensorflow.keras.backend", "tf_keras.backend",
             "keras.src.backend":
            return (.backend, last)
        case "ops", "keras.ops", "keras.ops.numpy", "keras.ops.nn", "keras.src.ops", "keras.src.ops.numpy", "keras.src.ops.nn",
             "keras.ops.math", "keras.src.ops.math":
            return (.ops, last)
        case "tf", "tensorflow", "tf.math", "tensorflow.math", "tf.nn", "tensorflow.nn", "tf.compat.v1", "tf.compat.v1.math",
             "tf.compat.v1.nn", "tf.linalg", "tensorflow.linalg":
            return (.tensorflow, last)
        default: return nil
        }
    }

    static func spec(_ library: PythonLibrary, _ name: String) -> PythonFunctionSpec? {
        let reduces: [String: ReduceFunction] = ["mean": .mean, "sum": .sum, "max": .max, "min": .min, "prod": .prod,
                                                 "logsumexp": .logSumExp]
        let unaries: [String: UnaryFunction] = ["square": .square, "exp": .exp, "log": .log, "abs": .abs, "sign": .sign,
                                                "round": .round, "sin": .sin, "cos": .cos, "tan": .tan, "floor": .floor,
                                                "ceil": .ceil, "erf": .erf, "rsqrt": .rsqrt, "sqrt": .sqrt]
        let activations: [String: Activation] = ["sigmoid": .sigmoid, "tanh": .tanh, "softplus": .softplus, "softsign": .softsign,
                                                  "selu": .selu, "swish": .swish, "silu": .swish, "relu6": .clippedReLU(maxValue: 6, negativeSlope: 0, threshold: 0)]
        let binaries: [String: BinaryFunction] = ["maximum": .maximum, "minimum": .minimum]
        switch library {
        case .builtins:
            if name == "abs" { return .init(parameters: ["x"], kind: .unary(.abs)) }
            if name == "pow" { return .init(parameters: ["base", "exp"], kind: .binary(.pow)) }
            return nil
        case .backend:
            if let r = reduces[name] {
                return .init(parameters: ["x", "axis", "keepdims"], defaults: ["axis": .none, "keepdims": .bool(false)], kind: .reduce(r))
            }
            if name == "sqrt" { return .init(parameters: ["x"], kind: .backendSqrt) }
            if let u = unaries[name], name != "rsqrt", name != "tan", name != "erf", name != "floor", name != "ceil" {
                return .init(parameters: ["x"], kind: .unary(u))
            }
            if let a = activations[name], !["selu", "swish", "silu", "relu6"].contains(name) { return .init(parameters: ["x"], kind: .activation(a)) }
            if let b = binaries[name] { return .init(parameters: ["x", "y"], kind: .binary(b)) }
            switch name {
            case "hard_sigmoid": return .init(parameters: ["x"], kind: .activation(.hardSigmoid(alpha: 0.2, beta: 0.5)))
            case "relu": return .init(parameters: ["x", "alpha", "max_value", "threshold"],
                                      defaults: ["alpha": .float(0), "max_value": .none, "threshold": .float(0)], kind: .relu(backend: true))
            case "elu": return .init(parameters: ["x", "alpha"], defaults: ["alpha": .float(1)], kind: .elu)
            case "softmax": return .init(parameters: ["x", "axis"], defaults: ["axis": .int(-1)], kind: .softmax)
            case "clip": return .init(parameters: ["x", "min_value", "max_value"], kind: .clip(keras2: true))
            case "pow": return .init(parameters: ["x", "a"], kind: .binary(.pow))
            case "concatenate": return .init(parameters: ["tensors", "axis"], defaults: ["axis": .int(-1)], kind: .concat)
            case "stack": return .init(parameters: ["x", "axis"], defaults: ["axis": .int(0)], kind: .stack)
            case "expand_dims": return .init(parameters: ["x", "axis"], defaults: ["axis": .int(-1)], kind: .expandDims)
            case "squeeze": return .init(parameters: ["x", "axis"], kind: .squeeze)
            case "reshape": return .init(parameters: ["x", "shape"], kind: .reshape)
            case "permute_dimensions": return .init(parameters: ["x", "pattern"], kind: .transpose)
            case "l2_normalize": return .init(parameters: ["x", "axis"], defaults: ["axis": .none, "epsilon": .float(1e-12)], kind: .l2Normalize)
            case "tile": return .init(parameters: ["x", "n"], aliases: ["multiples": "n"], kind: .tile)
            case "batch_flatten": return .init(parameters: ["x"], kind: .batchFlatten)
            case "epsilon": return .init(parameters: [], kind: .epsilon)
            default: return nil
            }
        case .tensorflow:
            var spec: PythonFunctionSpec?
            let n = name.hasPrefix("reduce_") ? String(name.dropFirst(7)) : name
            if name.hasPrefix("reduce_"), let r = reduces[n] {
                spec = .init(parameters: ["input_tensor", "axis", "keepdims", "name"], defaults: ["axis": .none, "keepdims": .bool(false)],
                             kind: .reduce(r))
            } else if let u = unaries[name] {
                spec = .init(parameters: ["x", "name"], kind: .unary(u))
            } else if name == "negative" {
                spec = .init(parameters: ["x", "name"], kind: .unary(.neg))
            } else if name == "reciprocal" {
                spec = .init(parameters: ["x", "name"], kind: .unary(.inverse))
            } else if let a = activations[name] {
                spec = .init(parameters: ["features", "name"], aliases: ["x": "features"], kind: .activation(a))
            } else if let b = binaries[name] {
                spec = .init(parameters: ["x", "y", "name"], kind: .binary(b))
            } else {
                switch name {
                case "relu": spec = .init(parameters: ["features", "name"], kind: .relu(backend: false))
                case "elu": spec = .init(parameters: ["features", "name"], defaults: ["alpha": .float(1)], kind: .elu)
                case "leaky_relu": spec = .init(parameters: ["features", "alpha", "name"], defaults: ["alpha": .float(0.2)], kind: .leakyReLU)
                case "gelu": spec = .init(parameters: ["features", "approximate", "name"], defaults: ["approximate": .bool(false)], kind: .gelu)
                case "softmax": spec = .init(parameters: ["logits", "axis", "name"], defaults: ["axis": .none], aliases: ["dim": "axis"], kind: .softmax)
                case "log_softmax": spec = .init(parameters: ["logits", "axis", "name"], defaults: ["axis": .none], aliases: ["dim": "axis"], kind: .logSoftmax)
                case "clip_by_value": spec = .init(parameters: ["t", "clip_value_min", "clip_value_max", "name"], kind: .clip(keras2: false))
                case "add": spec = .init(parameters: ["x", "y", "name"], kind: .binary(.add))
                case "subtract": spec = .init(parameters: ["x", "y", "name"], kind: .binary(.sub))
                case "multiply": spec = .init(parameters: ["x", "y", "name"], kind: .binary(.mul))
                case "divide", "truediv", "div": spec = .init(parameters: ["x", "y", "name"], kind: .binary(.realDiv))
                case "floordiv", "floor_div": spec = .init(parameters: ["x", "y", "name"], kind: .binary(.floorDiv))
                case "floormod", "mod": spec = .init(parameters: ["x", "y", "name"], kind: .binary(.mod))
                case "pow": spec = .init(parameters: ["x", "y", "name"], kind: .binary(.pow))
                case "concat": spec = .init(parameters: ["values", "axis", "name"], kind: .concat)
                case "stack": spec = .init(parameters: ["values", "axis", "name"], defaults: ["axis": .int(0)], kind: .stack)
                case "expand_dims": spec = .init(parameters: ["input", "axis", "name"], aliases: ["dim": "axis"], kind: .expandDims)
                case "squeeze": spec = .init(parameters: ["input", "axis", "name"], defaults: ["axis": .none], aliases: ["squeeze_dims": "axis"], kind: .squeeze)
                case "reshape": spec = .init(parameters: ["tensor", "shape", "name"], kind: .reshape)
                case "transpose": spec = .init(parameters: ["a", "perm", "name", "conjugate"], defaults: ["perm": .none, "conjugate": .bool(false)], kind: .transpose)
                case "l2_normalize": spec = .init(parameters: ["x", "axis", "epsilon", "name", "dim"], defaults: ["axis": .none, "epsilon": .float(1e-12), "dim": .none], kind: .l2Normalize)
                case "tile": spec = .init(parameters: ["input", "multiples", "name"], kind: .tile)
                case "matmul": spec = .init(parameters: ["a", "b"], kind: .matmul)
                case "pad": spec = .init(parameters: ["tensor", "paddings", "mode", "constant_values", "name"],
                                         defaults: ["mode": .string("CONSTANT"), "constant_values": .int(0)], kind: .pad)
                default: spec = nil
                }
            }
            if var s = spec, !s.parameters.contains("name") { s.parameters.append("name"); spec = s }
            return spec
        case .ops:
            if let r = reduces[name] {
                return .init(parameters: ["x", "axis", "keepdims"], defaults: ["axis": .none, "keepdims": .bool(false)], kind: .reduce(r))
            }
            if let u = unaries[name], name != "round" { return .init(parameters: ["x"], kind: .unary(u)) }
            if let a = activations[name] { return .init(parameters: ["x"], kind: .activation(a)) }
            if let b = binaries[name] { return .init(parameters: ["x1", "x2"], kind: .binary(b)) }
            switch name {
            case "absolute": return .init(parameters: ["x"], kind: .unary(.abs))
            case "negative": return .init(parameters: ["x"], kind: .unary(.neg))
            case "reciprocal": return .init(parameters: ["x"], kind: .unary(.inverse))
            case "round": return .init(parameters: ["x", "decimals"], defaults: ["decimals": .int(0)], kind: .unary(.round))
            case "relu": return .init(parameters: ["x"], kind: .relu(backend: false))
            case "elu": return .init(parameters: ["x", "alpha"], defaults: ["alpha": .float(1)], kind: .elu)
            case "leaky_relu": return .init(parameters: ["x", "negative_slope"], defaults: ["negative_slope": .float(0.2)], aliases: ["alpha": "negative_slope"], kind: .leakyReLU)
            case "gelu": return .init(parameters: ["x", "approximate"], defaults: ["approximate": .bool(true)], kind: .gelu)
            case "softmax": return .init(parameters: ["x", "axis"], defaults: ["axis": .int(-1)], kind: .softmax)
            case "log_softmax": return .init(parameters: ["x", "axis"], defaults: ["axis": .int(-1)], kind: .logSoftmax)
            case "clip": return .init(parameters: ["x", "x_min", "x_max"], kind: .clip(keras2: false))
            case "add": return .init(parameters: ["x1", "x2"], kind: .binary(.add))
            case "subtract": return .init(parameters: ["x1", "x2"], kind: .binary(.sub))
            case "multiply": return .init(parameters: ["x1", "x2"], kind: .binary(.mul))
            case "divide", "true_divide": return .init(parameters: ["x1", "x2"], kind: .binary(.realDiv))
            case "floor_divide": return .init(parameters: ["x1", "x2"], kind: .binary(.floorDiv))
            case "mod": return .init(parameters: ["x1", "x2"], kind: .binary(.mod))
            case "power": return .init(parameters: ["x1", "x2"], kind: .binary(.pow))
            case "concatenate": return .init(parameters: ["xs", "axis"], defaults: ["axis": .int(0)], kind: .concat)
            case "stack": return .init(parameters: ["x", "axis"], defaults: ["axis": .int(0)], kind: .stack)
            case "expand_dims": return .init(parameters: ["x", "axis"], kind: .expandDims)
            case "squeeze": return .init(parameters: ["x", "axis"], defaults: ["axis": .none], kind: .squeeze)
            case "reshape": return .init(parameters: ["x", "newshape"], kind: .reshape)
            case "transpose": return .init(parameters: ["x", "axes"], defaults: ["axes": .none], kind: .transpose)
            case "tile": return .init(parameters: ["x", "repeats"], kind: .tile)
            case "matmul": return .init(parameters: ["x1", "x2"], kind: .matmul)
            case "pad": return .init(parameters: ["x", "pad_width", "mode", "constant_values"],
                                     defaults: ["mode": .string("constant"), "constant_values": .none], kind: .pad)
            default: return nil
            }
        }
    }
}

extension PythonLowering {
    /// Normalises `axis` (negative from the end) for rank `rank`; refuses the batch axis.
    func axis(_ a: Int, rank: Int, _ b: PythonCallArguments) throws(PythonLoweringFailure) -> Int {
        let n = a < 0 ? a + rank : a
        guard n >= 0, n < rank else { throw b.fail("axis \(a) is out of range for rank \(rank)") }
        guard n != 0 else { throw b.fail("axis \(a) is the batch axis, which the per-sample IR cannot \(b.function.contains("reduce") || b.function.contains("mean") || b.function.contains("sum") ? "reduce" : "change")") }
        return n
    }

    mutating func lowerCall(_ kind: PythonFunctionKind, _ b: inout PythonCallArguments) throws(PythonLoweringFailure) -> LoweredValue {
        /// The main operand: tensor parameter 0 of the spec.
        func x(_ p: String) throws(PythonLoweringFailure) -> String { try b.tensor(p) }
        let first = b.values.keys.contains("x") ? "x" : (["input_tensor", "features", "logits", "t", "input", "tensor", "a", "x1", "tensors", "values", "xs", "base"].first { b.values[$0] != nil } ?? "x")
        switch kind {
        case .epsilon:
            return .constant(.float(1e-7))
        case let .reduce(fn):
            let t = try x(first)
            let r = shape(t).count
            guard let axes = try b.ints("axis") else { throw b.fail("axis=None reduces over the batch axis too, which the per-sample IR cannot express") }
            var resolved: [Int] = []
            for a in axes { resolved.append(try axis(a, rank: r, b)) }
            let keep = try b.bool("keepdims")
            return try emit(.reduce(ReduceAttributes(function: fn, axes: resolved, keepDims: keep)), [t])
        case let .unary(fn):
            let v = b.value(first)
            if case let .constant(c)? = v, let n = c.number {
                switch fn {
                case .abs: return .constant(c.integer != nil ? .int(Int64(Swift.abs(c.integer!))) : .float(Swift.abs(n)))
                case .sqrt: return .constant(.float(n.squareRoot()))
                case .square: return .constant(c.integer != nil ? (PythonLowering.fold(.multiply, c, c) ?? .float(n * n)) : .float(n * n))
                default: break
                }
            }
            if first == "x", b.values["decimals"] != nil, (try b.ints("decimals")) != [0] { throw b.fail("decimals other than 0") }
            return try emit(.unary(UnaryAttributes(fn)), [try x(first)])
        case .backendSqrt:
            let t = try x(first)
            let clipped = try emit(.unary(UnaryAttributes(.threshold, alpha: 0)), [t])
            guard case let .tensor(c) = clipped else { throw b.fail("internal") }
            return try emit(.unary(UnaryAttributes(.sqrt)), [c])
        case let .activation(a):
            return try emit(.activation(a), [try x(first)])
        case let .relu(backend):
            let t = try x(first)
            if backend {
                let alpha = try b.number("alpha"), threshold = try b.number("threshold")
                let maxValue: Float? = b.isNone("max_value") ? nil : Float(try b.number("max_value"))
                if alpha == 0, threshold == 0, maxValue == nil { return try emit(.activation(.relu), [t]) }
                return try emit(.activation(.clippedReLU(maxValue: maxValue, negativeSlope: Float(alpha), threshold: Float(threshold))), [t])
            }
            return try emit(.activation(.relu), [t])
        case .elu:
            return try emit(.activation(.elu(alpha: Float(try b.number("alpha")))), [try x(first)])
        case .leakyReLU:
            let slope = b.values["negative_slope"] != nil ? try b.number("negative_slope") : try b.number("alpha")
            return try emit(.activation(.leakyReLU(alpha: Float(slope))), [try x(first)])
        case .gelu:
            return try emit(.activation(.gelu(approximate: try b.bool("approximate"))), [try x(first)])
        case .softmax, .logSoftmax:
            let t = try x(first)
            let a = try b.ints("axis") ?? [-1]
            guard a.count == 1 else { throw b.fail("softmax over several axes") }
            let n = try axis(a[0], rank: shape(t).count, b)
            return try emit(kind == .softmax ? .softmax(axis: n) : .logSoftmax(axis: n), [t])
        case let .clip(keras2):
            let t = try x(first)
            let (lo, hi) = keras2 ? ("min_value", "max_value") : (b.values["t"] != nil ? ("clip_value_min", "clip_value_max") : ("x_min", "x_max"))
            var minV = b.isNone(lo) ? -Double.infinity : try b.number(lo)
            var maxV = b.isNone(hi) ? Double.infinity : try b.number(hi)
            if keras2, !b.isNone(lo), !b.isNone(hi), maxV < minV { maxV = minV }
            guard minV <= maxV else { throw b.fail("the lower bound \(minV) is above the upper bound \(maxV)") }
            if minV.isNaN || maxV.isNaN { throw b.fail("NaN bound") }
            minV = max(minV, -Double(Float.greatestFiniteMagnitude) * 2); maxV = min(maxV, Double(Float.greatestFiniteMagnitude) * 2)
            return try emit(.clip(alpha: Float(minV), beta: Float(maxV)), [t])
        case let .binary(fn):
            let names = ["x", "y", "a", "x1", "x2", "base", "exp"]
            let operands = names.compactMap { b.values[$0] }
            guard operands.count == 2 else { throw b.fail("needs two operands") }
            if let ca = constantValue(operands[0]), let cb = constantValue(operands[1]) {
                let op: PythonBinaryOperator? = [.add: .add, .sub: .subtract, .mul: .multiply, .realDiv: .trueDivide, .pow: .power][fn]
                if let op, let r = PythonLowering.fold(op, ca, cb) { return .constant(r) }
                throw b.fail("constant operands")
            }
            return try binaryFunction(fn, operands[0], operands[1])
        case .concat:
            let ts = try b.tensors(first)
            guard !ts.isEmpty, let r = types[ts[0]]?.shape.count else { throw b.fail("no tensors to join") }
            guard let a = try b.ints("axis"), a.count == 1 else { throw b.fail("'axis' must be one integer") }
            if ts.count == 1 { return .tensor(ts[0]) }
            return try emit(.concat(axis: try axis(a[0], rank: r, b)), ts)
        case .stack:
            let ts = try b.tensors(first)
            guard !ts.isEmpty, let r = types[ts[0]]?.shape.count else { throw b.fail("no tensors to stack") }
            guard let a = try b.ints("axis"), a.count == 1 else { throw b.fail("'axis' must be one integer") }
            return try emit(.stack(axis: try axis(a[0], rank: r + 1, b)), ts)
        case .expandDims:
            let t = try x(first)
            guard let a = try b.ints("axis"), a.count == 1 else { throw b.fail("'axis' must be one integer") }
            return try emit(.expandDims(axes: [try axis(a[0], rank: shape(t).count + 1, b)]), [t])
        case .squeeze:
            let t = try x(first)
            let s = shape(t)
            guard let a = try b.ints("axis") else { throw b.fail("axis=None would squeeze the batch axis too") }
            var axes: [Int] = []
            for k in a {
                let n = try axis(k, rank: s.count, b)
                guard s[n] == 1 else { throw b.fail("axis \(k) has size \(s[n]), not 1") }
                axes.append(n)
            }
            return try emit(.squeeze(axes: axes), [t])
        case .reshape:
            let t = try x(first)
            let p = b.values["shape"] != nil ? "shape" : "newshape"
            guard let target = try b.ints(p), !target.isEmpty else { throw b.fail("'\(p)' must be a constant shape") }
            guard target[0] == -1 else { throw b.fail("the target shape \(target) must start with -1 (the batch)") }
            guard !target.dropFirst().contains(-1) else { throw b.fail("the target shape \(target) has a second -1") }
            guard target.dropFirst().allSatisfy({ $0 > 0 }) else { throw b.fail("the target shape \(target) has a size below 1") }
            return try emit(.reshapeND(shape: [1] + target.dropFirst()), [t])
        case .transpose:
            let t = try x(first)
            let r = shape(t).count
            let p = ["perm", "pattern", "axes"].first { b.values[$0] != nil } ?? "perm"
            guard let perm = try b.ints(p) else { throw b.fail("no permutation reverses every axis, the batch axis too") }
            guard perm.count == r, Set(perm) == Set(0..<r) else { throw b.fail("\(perm) is not a permutation of \(r) axes") }
            guard perm[0] == 0 else { throw b.fail("the permutation \(perm) moves the batch axis") }
            return try emit(.transpose(perm: perm), [t])
        case .l2Normalize:
            let t = try x(first)
            let r = shape(t).count
            let axisKey = b.isNone("dim") ? "axis" : "dim"
            guard let axes = try b.ints(axisKey) else { throw b.fail("axis=None normalises over the batch axis too") }
            var resolved: [Int] = []
            for a in axes { resolved.append(try axis(a, rank: r, b)) }
            let eps = try b.number("epsilon")
            // TensorFlow: x · rsqrt(max(Σ x², epsilon)).
            guard case let .tensor(ss) = try emit(.reduce(ReduceAttributes(function: .sumSquare, axes: resolved, keepDims: true)), [t]),
                  case let .tensor(m) = try emit(.unary(UnaryAttributes(.threshold, alpha: Float(eps))), [ss]),
                  case let .tensor(inv) = try emit(.unary(UnaryAttributes(.rsqrt)), [m]) else { throw b.fail("internal") }
            return try emit(.binary(.mul), [t, inv])
        case .tile:
            let t = try x(first)
            let p = ["multiples", "n", "repeats"].first { b.values[$0] != nil } ?? "multiples"
            guard let reps = try b.ints(p), reps.count == shape(t).count else { throw b.fail("'\(p)' must have one entry per axis") }
            guard reps[0] == 1 else { throw b.fail("'\(p)' repeats the batch axis") }
            guard reps.allSatisfy({ $0 >= 1 }) else { throw b.fail("'\(p)' has an entry below 1") }
            return try emit(.tile(reps: reps), [t])
        case .pad:
            let t = try x(first)
            let r = shape(t).count
            let p = b.values["paddings"] != nil ? "paddings" : "pad_width"
            guard let c = b.constant(p), let (flat, dims) = PythonLowering.numericArray(c), dims == [r, 2],
                  flat.allSatisfy({ $0 >= 0 && $0 == $0.rounded() && $0 < 1e6 }) else {
                throw b.fail("'\(p)' must be \(r) constant [before, after] pairs")
            }
            let pads = (0..<r).map { [Int(flat[2 * $0]), Int(flat[2 * $0 + 1])] }
            guard pads[0] == [0, 0] else { throw b.fail("pads the batch axis") }
            guard case let .string(modeText)? = b.constant("mode") else { throw b.fail("'mode' must be a string") }
            let mode: PadMode
            switch modeText.lowercased() {
            case "constant": mode = .constant
            case "reflect": mode = .reflect
            case "edge": mode = .edge
            default: throw b.fail("mode '\(modeText)' has no IR padding (constant, reflect and edge do)")
            }
            let value = b.isNone("constant_values") ? 0 : try b.number("constant_values")
            return try emit(.pad(PadAttributes(mode: mode, pads: pads, value: Float(value))), [t])
        case .batchFlatten:
            return try emit(.reshapeND(shape: [1, -1]), [try x(first)])
        case .matmul:
            let operands = ["a", "b", "x1", "x2"].compactMap { b.values[$0] }
            guard operands.count == 2, case let .tensor(l) = operands[0], case let .tensor(r) = operands[1] else { throw b.fail("needs two tensors") }
            return try emit(.matmul(MatMulAttributes()), [l, r])
        }
    }
}
