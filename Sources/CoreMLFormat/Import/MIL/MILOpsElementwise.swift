// MIL elementwise ops: binary arithmetic, comparisons, logical ops, activations, unary math,
// cast, select, identity. Shapes and broadcasting are NumPy's, as in the IR.
import MLGraph

enum MILElementwiseOps {
    static let binary: [String: BinaryFunction] = [
        "add": .add, "sub": .sub, "mul": .mul, "real_div": .realDiv, "floor_div": .floorDiv, "mod": .mod, "pow": .pow,
        "maximum": .maximum, "minimum": .minimum,
    ]
    static let compare: [String: CompareFunction] = [
        "equal": .equal, "not_equal": .notEqual, "less": .less, "less_equal": .lessEqual, "greater": .greater, "greater_equal": .greaterEqual,
    ]
    static let logical: [String: LogicalFunction] = ["logical_and": .and, "logical_or": .or, "logical_xor": .xor, "logical_not": .not]
    /// Unary math ops and the default epsilon MIL gives them.
    static let unary: [String: UnaryFunction] = [
        "abs": .abs, "sqrt": .sqrt, "rsqrt": .rsqrt, "inverse": .inverse, "exp": .exp, "exp2": .exp2, "log": .log,
        "sin": .sin, "cos": .cos, "tan": .tan, "asin": .asin, "acos": .acos, "atan": .atan, "sinh": .sinh, "cosh": .cosh,
        "asinh": .asinh, "acosh": .acosh, "atanh": .atanh, "erf": .erf, "floor": .floor, "ceil": .ceil, "round": .round,
        "sign": .sign, "square": .square,
    ]

    static var mappers: [String: MILOpMapper] {
        var m: [String: MILOpMapper] = [:]
        for (name, f) in binary {
            m[name] = { c in
                let x = try c.tensor("x"), y = try c.tensor("y")
                // Integer arithmetic on the IR's float kernels: compute in float32, cast back.
                if let tx = c.type(x), tx.elementType != .float32 {
                    let fx = try c.helper("x_float", .cast(to: .float32), [x])
                    let fy = c.type(y)?.elementType == .float32 ? y : try c.helper("y_float", .cast(to: .float32), [y])
                    let r = try c.helper("float", .binary(f), [fx, fy])
                    return [try c.emit(.cast(to: tx.elementType), [r])]
                }
                let fy = c.type(y)?.elementType == .float32 ? y : try c.helper("y_float", .cast(to: .float32), [y])
                return [try c.emit(.binary(f), [x, fy])]
            }
        }
        for (name, f) in compare {
            m[name] = { c in
                var x = try c.tensor("x"), y = try c.tensor("y")
                if let tx = c.type(x)?.elementType, let ty = c.type(y)?.elementType, tx != ty {
                    if tx != .float32 { x = try c.helper("x_float", .cast(to: .float32), [x]) }
                    if ty != .float32 { y = try c.helper("y_float", .cast(to: .float32), [y]) }
                }
                return [try c.emit(.compare(f), [x, y])]
            }
        }
        for (name, f) in logical {
            m[name] = { c in [try c.emit(.logical(f), f == .not ? [try c.tensor("x")] : [try c.tensor("x"), try c.tensor("y")])] }
        }
        for (name, f) in unary {
            m[name] = { c in
                let eps = try c.float("epsilon", default: f == .rsqrt || f == .inverse || f == .log ? f.defaultEpsilon : 0)
                return [try c.emit(.unary(UnaryAttributes(f, epsilon: eps)), [try c.tensor("x")])]
            }
        }
        func act(_ a: @escaping (MILOpContext) throws -> Activation) -> MILOpMapper {
            { c in [try c.emit(.activation(try a(c)), [try c.tensor("x")])] }
        }
        m["relu"] = act { _ in .relu }
        m["relu6"] = act { _ in .clippedReLU(maxValue: 6, negativeSlope: 0, threshold: 0) }
        m["sigmoid"] = act { _ in .sigmoid }
        m["tanh"] = act { _ in .tanh }
        m["silu"] = act { _ in .swish }
        m["softplus"] = act { _ in .softplus }
        m["softsign"] = act { _ in .softsign }
        m["elu"] = act { c in .elu(alpha: try c.float("alpha", default: 1)) }
        m["leaky_relu"] = act { c in .leakyReLU(alpha: try c.float("alpha", default: 0.01)) }
        m["sigmoid_hard"] = act { c in .hardSigmoid(alpha: try c.float("alpha", default: 0.2), beta: try c.float("beta", default: 0.5)) }
        m["thresholded_relu"] = act { c in .thresholdedReLU(theta: try c.float("alpha", default: 1)) }
        m["scaled_tanh"] = act { c in .scaledTanh(alpha: try c.float("alpha", default: 1), beta: try c.float("beta", default: 1)) }
        m["linear_activation"] = act { c in .linear(alpha: try c.float("alpha"), beta: try c.float("beta", default: 0)) }
        m["gelu"] = act { c in
            switch try c.string("mode", default: "EXACT") {
            case "EXACT": return .gelu(approximate: false)
            case "TANH_APPROXIMATION": return .gelu(approximate: true)
            case "SIGMOID_APPROXIMATION": return .geluSigmoid
            case let other: throw LayerImportFailure("has gelu mode '\(other)'; expected EXACT, TANH_APPROXIMATION or SIGMOID_APPROXIMATION")
            }
        }
        m["clip"] = { c in [try c.emit(.clip(alpha: try c.float("alpha"), beta: try c.float("beta")), [try c.tensor("x")])] }
        m["identity"] = { c in [.tensor(try c.tensor("x"))] }
        m["select"] = { c in
            var cond = try c.tensor("cond")
            if c.type(cond)?.elementType != .bool { cond = try c.helper("cond_bool", .cast(to: .bool), [cond]) }
            return [try c.emit(.select, [cond, try c.tensor("a"), try c.tensor("b")])]
        }
        m["cast"] = { c in
            let dtype = try c.string("dtype")
            guard let t = MILTypes.dataType(named: dtype), let e = MILTypes.irElementType(t) else {
                throw LayerImportFailure("casts to '\(dtype)', which mlconv does not run")
            }
            if case let .constant(k)? = try c.value("x")?.1 {
                return [.constant(try MILConstFold.cast(k, to: t))]
            }
            let x = try c.tensor("x")
            if c.type(x)?.elementType == e { return [.tensor(x)] }
            return [try c.emit(.cast(to: e), [x])]
        }
        return m
    }
}

extension UnaryFunction {
    /// MIL's default epsilon of `rsqrt`, `inverse` and `log`.
    var defaultEpsilon: Float {
        switch self {
        case .rsqrt: return 1e-12
        case .inverse: return 1e-4
        case .log: return .leastNonzeroMagnitude
        default: return 0
        }
    }
}

/// Import-time evaluation of ops on constants (cast, and the shape ops of MILOpsShape.swift).
enum MILConstFold {
    static func cast(_ k: MILConst, to t: Spec.MILSpec.DataType) throws -> MILConst {
        var out = k
        out.dataType = t
        guard k.strings == nil else { throw LayerImportFailure("casts a string constant") }
        let v = k.doubles()
        switch t {
        case .float16:
            out.numbers = v.map { Double(Float(Float16(Float($0)))) }
        case .float32, .float64:
            out.numbers = v.map { Double(Float($0)) }
        case .bool:
            out.numbers = v.map { $0 != 0 ? 1 : 0 }
        default:
            out.numbers = v.map { $0.isNaN ? 0 : $0.rounded(.towardZero) }
        }
        out.tensor = nil
        return out
    }
}
