#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: elementwise math ops (unary, binary, clip)

/// The function of an `Op.unary` node. Names and formulas are MIL's (coremltools
/// `converters/mil/mil/ops/defs/iOS15/elementwise_unary.py`) except `neg` (ONNX `Neg`; MIL has
/// none), `threshold` and `power` (Core ML `UnaryFunctionLayerParams` THRESHOLD and POWER; MIL
/// writes them as `maximum` / `pow` with a constant). `x'` = scale·x + shift (see `UnaryAttributes`).
public enum UnaryFunction: String, Codable, Hashable, Sendable, CaseIterable {
    /// |x'|.
    case abs
    /// −x'.
    case neg
    /// √x' (NaN for x' < 0).
    case sqrt
    /// 1/√(x' + epsilon) (MIL `rsqrt`, default epsilon 1e-12; Core ML RSQRT, default 1e-6).
    case rsqrt
    /// 1/(x' + epsilon) (MIL `inverse`, default epsilon 1e-4; Core ML INVERSE, default 1e-6).
    case inverse
    /// eˣ'.
    case exp
    /// 2ˣ'.
    case exp2
    /// ln(x' + epsilon) (MIL `log`, default epsilon 1e-45; Core ML LOG has no epsilon: 0).
    case log
    case sin, cos, tan
    /// The error function.
    case erf
    case floor, ceil
    /// Round half to even (MIL `round`: "0.5 is rounded to 0", value inference `np.round`).
    case round
    /// −1, 0 or 1 (NaN stays NaN; `np.sign`).
    case sign
    /// x'².
    case square
    /// max(x', alpha) (Core ML THRESHOLD; NaN propagates as `np.maximum`).
    case threshold
    /// x'^alpha (Core ML POWER; C `powf`, as `np.power` on float32).
    case power
    /// Inverse trigonometric functions (C `asinf`, `acosf`, `atanf`; NaN outside [−1, 1] for asin
    /// and acos). MIL `asin`, `acos`, `atan`; Core ML `asin`, `acos`, `atan` (NeuralNetwork v2).
    case asin, acos, atan
    /// Hyperbolic functions (C `sinhf`, `coshf`, `tanhf`). MIL `sinh`, `cosh`, `tanh`; Core ML
    /// `sinh`, `cosh`, `tanh` (NeuralNetwork v2).
    case sinh, cosh, tanh
    /// Inverse hyperbolic functions (C `asinhf`, `acoshf` — NaN below 1 —, `atanhf` — ±inf at
    /// ±1, NaN beyond). MIL `atanh`; Core ML `asinh`, `acosh`, `atanh` (NeuralNetwork v2).
    case asinh, acosh, atanh

    /// MIL's default epsilon for the functions that take one (0 for the others).
    public var milDefaultEpsilon: Float {
        switch self {
        case .rsqrt: return 1e-12
        case .inverse: return 1e-4
        case .log: return .leastNonzeroMagnitude  // MIL's 1e-45: the smallest float32 subnormal
        default: return 0
        }
    }

    /// Whether `UnaryAttributes.epsilon` enters the formula.
    public var usesEpsilon: Bool { self == .rsqrt || self == .inverse || self == .log }
    /// Whether `UnaryAttributes.alpha` enters the formula.
    public var usesAlpha: Bool { self == .threshold || self == .power }
}

/// Attributes of `Op.unary`: y = f(scale·x + shift) elementwise, where `f` is `function`
/// (Core ML `UnaryFunctionLayerParams`' form; MIL's ops are scale 1, shift 0). `alpha` is the
/// threshold / exponent, `epsilon` the stabiliser of rsqrt, inverse and log (0 = none; it is
/// stored explicitly, never defaulted, because MIL and Core ML defaults differ).
public struct UnaryAttributes: Codable, Hashable, Sendable {
    public var function: UnaryFunction
    public var alpha: Float
    public var epsilon: Float
    public var scale: Float
    public var shift: Float

    public init(_ function: UnaryFunction, alpha: Float = 0, epsilon: Float = 0, scale: Float = 1, shift: Float = 0) {
        self.function = function; self.alpha = alpha; self.epsilon = epsilon; self.scale = scale; self.shift = shift
    }

    /// Whether the input is transformed before `function` (scale ≠ 1 or shift ≠ 0).
    public var isAffine: Bool { scale != 1 || shift != 0 }

    /// The scalar definition (reference kernels use it).
    @inlinable
    public func apply(_ x0: Float) -> Float {
        let x = isAffine ? scale * x0 + shift : x0
        switch function {
        case .abs: return Swift.abs(x)
        case .neg: return -x
        case .sqrt: return x.squareRoot()
        case .rsqrt: return 1 / (x + epsilon).squareRoot()
        case .inverse: return 1 / (x + epsilon)
        case .exp: return expf(x)
        case .exp2: return exp2f(x)
        case .log: return logf(x + epsilon)
        case .sin: return sinf(x)
        case .cos: return cosf(x)
        case .tan: return tanf(x)
        case .asin: return asinf(x)
        case .acos: return acosf(x)
        case .atan: return atanf(x)
        case .sinh: return sinhf(x)
        case .cosh: return coshf(x)
        case .tanh: return tanhf(x)
        case .asinh: return asinhf(x)
        case .acosh: return acoshf(x)
        case .atanh: return atanhf(x)
        case .erf: return erff(x)
        case .floor: return x.rounded(.down)
        case .ceil: return x.rounded(.up)
        case .round: return x.rounded(.toNearestOrEven)
        case .sign: return x > 0 ? 1 : (x < 0 ? -1 : x)
        case .square: return x * x
        case .threshold: return x.isNaN ? x : Swift.max(x, alpha)
        case .power: return powf(x, alpha)
        }
    }
}

/// The function of an `Op.binary` node: MIL's elementwise binary ops
/// (`converters/mil/mil/ops/defs/iOS15/elementwise_binary.py`), NumPy broadcasting, float32.
public enum BinaryFunction: String, Codable, Hashable, Sendable, CaseIterable {
    /// x + y, x − y, x·y, x/y (IEEE: x/0 = ±inf or NaN).
    case add, sub, mul
    case realDiv = "real_div"
    /// ⌊x/y⌋ as `np.floor_divide` (Python `//`): computed as (x − mod(x, y))/y, so 1 // 0.1 = 9;
    /// y = 0 gives x/y.
    case floorDiv = "floor_div"
    /// Floor modulo as `np.mod` (Python `%`): the result has the divisor's sign; y = 0 gives NaN.
    case mod
    /// xʸ (C `powf`).
    case pow
    /// NaN if either operand is NaN (`np.maximum` / `np.minimum`), else the larger / smaller.
    case maximum, minimum

    /// The scalar definition (reference kernels use it).
    @inlinable
    public func apply(_ a: Float, _ b: Float) -> Float {
        switch self {
        case .add: return a + b
        case .sub: return a - b
        case .mul: return a * b
        case .realDiv: return a / b
        case .floorDiv: return BinaryFunction.divmod(a, b).div
        case .mod: return b == 0 ? fmodf(a, b) : BinaryFunction.divmod(a, b).mod
        case .pow: return powf(a, b)
        case .maximum: return a.isNaN || b.isNaN ? .nan : Swift.max(a, b)
        case .minimum: return a.isNaN || b.isNaN ? .nan : Swift.min(a, b)
        }
    }

    /// NumPy's `npy_divmodf`: floor quotient and floor remainder, as `np.floor_divide` and
    /// `np.mod` compute them for float32.
    @inlinable
    public static func divmod(_ a: Float, _ b: Float) -> (div: Float, mod: Float) {
        var mod = fmodf(a, b)
        if b == 0 { return (a / b, mod) }
        var div = (a - mod) / b
        if mod != 0 {
            if (b < 0) != (mod < 0) { mod += b; div -= 1 }
        } else {
            mod = Float(signOf: b, magnitudeOf: 0)
        }
        var floordiv: Float
        if div != 0 {
            floordiv = div.rounded(.down)
            if div - floordiv > 0.5 { floordiv += 1 }
        } else {
            floordiv = Float(signOf: a / b, magnitudeOf: 0)
        }
        return (floordiv, mod)
    }

    /// Whether f(a, b) = f(b, a).
    public var isCommutative: Bool {
        switch self {
        case .add, .mul, .maximum, .minimum: return true
        default: return false
        }
    }
}

/// Definition of `Op.unary`: y = f(scale·x + shift) for one `UnaryFunction`. MIL `abs`, `sqrt`,
/// `rsqrt`, `inverse`, `exp`, `exp2`, `log`, `sin`, `cos`, `tan`, `asin`, `acos`, `atan`, `sinh`,
/// `cosh`, `tanh`, `atanh`, `erf`, `floor`, `ceil`, `round`, `sign`, `square`, `threshold`; ONNX `Abs`, `Neg`, `Sqrt`, `Reciprocal`, `Exp`, `Log`, `Sin`, …;
/// Core ML `unary` (UnaryFunctionLayerParams).
enum UnaryDefinition: OpDefinition {
    static let kind = OpKind.unary
    static let summary = "elementwise math function f(scale·x + shift): abs, neg, sqrt, rsqrt, inverse, exp, log, sin, round, power, …"
    static let milOps = ["abs", "sqrt", "rsqrt", "inverse", "exp", "exp2", "log", "sin", "cos", "tan", "asin", "acos", "atan",
                         "sinh", "cosh", "tanh", "atanh", "erf", "floor", "ceil", "round", "sign", "square", "threshold"]
    static let onnxOps = ["Abs", "Neg", "Sqrt", "Reciprocal", "Exp", "Log", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan",
                          "Sinh", "Cosh", "Tanh", "Asinh", "Acosh", "Atanh", "Erf", "Floor", "Ceil", "Round",
                          "Sign", "Pow"]

    static func checkAttributes(of node: Node) throws {
        guard case let .unary(a) = node.op else { return }
        try node.checkFinite(a.alpha, "alpha"); try node.checkFinite(a.epsilon, "epsilon")
        try node.checkFinite(a.scale, "scale"); try node.checkFinite(a.shift, "shift")
    }

    static var functions: [OpFunctionExample] {
        UnaryFunction.allCases.map { OpFunctionExample($0.rawValue, .unary(UnaryAttributes($0, alpha: 1, epsilon: 1e-6)), inputs: [TensorType([1, 4, 4, 8])]) }
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        try node.expectInputs(ins, 1)
        return [ins[0]]
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .unary(a) = op else { return [:] }
        return ["function": .string(a.function.rawValue), "alpha": .number(a.alpha), "epsilon": .number(a.epsilon),
                "scale": .number(a.scale), "shift": .number(a.shift)]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op {
        .unary(UnaryAttributes(try a.enumeration("function", UnaryFunction.self), alpha: try a.float("alpha"),
                               epsilon: try a.float("epsilon"), scale: try a.float("scale"), shift: try a.float("shift")))
    }
}

/// Definition of `Op.binary`: f(x, y) with NumPy broadcasting; y is input 1, or the constant
/// weight "y" when the node has one (then exactly one input). MIL `add`, `sub`, `mul`,
/// `real_div`, `floor_div`, `mod`, `pow`, `maximum`, `minimum`; ONNX `Add`, `Sub`, `Mul`, `Div`,
/// `Mod` (fmod = 0), `Pow`, `Max`, `Min`.
enum BinaryDefinition: OpDefinition {
    static let kind = OpKind.binary
    static let summary = "binary math with broadcasting: add, sub, mul, real_div, floor_div, mod, pow, maximum, minimum (y may be a constant)"
    static let milOps = ["add", "sub", "mul", "real_div", "floor_div", "mod", "pow", "maximum", "minimum"]
    static let onnxOps = ["Add", "Sub", "Mul", "Div", "Mod", "Pow", "Max", "Min"]

    static var functions: [OpFunctionExample] {
        BinaryFunction.allCases.map { OpFunctionExample($0.rawValue, .binary($0), inputs: [TensorType([1, 4, 4, 8]), TensorType([1, 4, 4, 8])]) }
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        var operands = ins
        if let y = node.weights["y"] {
            try node.expectInputs(ins, 1)
            guard y.shape.count <= Node.maxRank else { throw node.fail("weight 'y' has rank \(y.shape.count) > \(Node.maxRank)") }
            operands.append(TensorType(y.shape, ins[0].elementType))
        } else {
            try node.expectInputs(ins, 2)
        }
        return [TensorType(try node.broadcastAll(operands), ins[0].elementType)]
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .binary(f) = op else { return [:] }
        return ["function": .string(f.rawValue)]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op { .binary(try a.enumeration("function", BinaryFunction.self)) }

    /// The constant second operand: one scale for the whole tensor, not compressed by default.
    static var weightRoles: [WeightRole] { [WeightRole("y", quantizationAxis: nil, quantizedByDefault: false)] }
}

/// Definition of `Op.clip(alpha:beta:)`: y = min(max(x, alpha), beta) (MIL `clip`, value
/// inference `np.minimum(np.maximum(x, alpha), beta)`; NaN propagates). Bounds may be infinite.
/// ONNX `Clip`, Core ML `clip` (spec 4).
enum ClipDefinition: OpDefinition {
    static let kind = OpKind.clip
    static let summary = "clip to [alpha, beta]: min(max(x, alpha), beta)"
    static let milOps = ["clip"]
    static let onnxOps = ["Clip"]

    static func checkAttributes(of node: Node) throws {
        guard case let .clip(alpha, beta) = node.op else { return }
        guard !alpha.isNaN, !beta.isNaN else { throw node.fail("clip bounds must not be NaN, found [\(alpha), \(beta)]") }
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        try node.expectInputs(ins, 1)
        return [ins[0]]
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .clip(alpha, beta) = op else { return [:] }
        return ["alpha": .number(alpha), "beta": .number(beta)]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op { .clip(alpha: try a.float("alpha"), beta: try a.float("beta")) }
}

extension Op {
    /// The scalar definition of `Op.clip`: min(max(x, alpha), beta); NaN stays NaN.
    @inlinable
    public static func clipValue(_ x: Float, alpha: Float, beta: Float) -> Float {
        x.isNaN ? x : Swift.min(Swift.max(x, alpha), beta)
    }
}
