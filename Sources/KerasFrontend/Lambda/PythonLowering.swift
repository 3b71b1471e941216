// Lowers a recovered Python expression (a Lambda's body, or one TFOpLambda call) to IR nodes:
// arithmetic with constants and tensors, NumPy basic indexing, and calls to the Keras backend
// (`K.*`), TensorFlow (`tf.*`, `tf.math.*`, `tf.nn.*`) and Keras 3 (`keras.ops.*`) functions the
// IR has, each with the signature and defaults of its own library (e.g. `K.concatenate` joins
// along axis −1 by default, `keras.ops.concatenate` along 0; `K.sqrt` clips at 0 first).
//
// Anything that would touch the batch axis (reducing, slicing, reshaping or transposing it) is
// refused: the IR is per-sample with a batch of 1, and such a model would differ from Keras.

import Diagnostics
import MLGraph

/// Why an expression could not be lowered to IR.
public struct PythonLoweringFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// Why, followed by the underlying error's text when there is one.
    public var reason: String { ownReason + cause.suffix }
    /// `reason` without the underlying error's text.
    public var ownReason: String
    /// The underlying error (the IR's `GraphError` for a lowered op it rejects), kept as a value
    /// (issue 13).
    public var cause: DiagnosticCause?
    public var description: String { reason }
    init(_ reason: String, cause: (any Error)? = nil) { ownReason = reason; self.cause = cause.map(DiagnosticCause.init) }
}

/// A value during lowering.
indirect enum LoweredValue {
    /// An IR tensor (by name).
    case tensor(String)
    case constant(PythonConstant)
    /// A Python tuple or list whose items may be tensors.
    case sequence([LoweredValue], isTuple: Bool)
    /// A slice whose parts are constants (None or ints).
    case slice(PythonConstant, PythonConstant, PythonConstant)
    /// A global name or attribute chain not yet resolved (a module or function).
    case name(String)
}

/// Builds the IR nodes of one Keras layer call from Python-level operations.
struct PythonLowering {
    let nodeName: String
    private(set) var nodes: [Node] = []
    private(set) var types: [String: TensorType]
    private var counter = 0
    /// Most nodes one layer may lower to.
    static let maxNodes = 1024

    init(nodeName: String, inputs: [String], inputTypes: [TensorType]) {
        self.nodeName = nodeName
        var t: [String: TensorType] = [:]
        for (n, ty) in zip(inputs, inputTypes) { t[n] = ty }
        types = t
    }

    // MARK: Emission

    mutating func emit(_ op: Op, _ inputs: [String], weights: [String: ConstantTensor] = [:]) throws(PythonLoweringFailure) -> LoweredValue {
        guard nodes.count < PythonLowering.maxNodes else { throw PythonLoweringFailure("the expression needs more than \(PythonLowering.maxNodes) IR nodes") }
        counter += 1
        let name = "\(nodeName)__\(counter)"
        let node = Node(name: name, op: op, inputs: inputs, outputs: [name], weights: weights)
        var ins: [TensorType] = []
        for i in inputs {
            guard let t = types[i] else { throw PythonLoweringFailure("internal: unknown tensor \(i)") }
            ins.append(t)
        }
        do {
            let outs = try node.inferOutputTypes(ins)
            guard outs.count == 1 else { throw PythonLoweringFailure("internal: \(op.kind.rawValue) has \(outs.count) outputs") }
            types[name] = outs[0]
        } catch let e as PythonLoweringFailure {
            throw e
        } catch {
            throw PythonLoweringFailure("\(op.kind.rawValue) on \(ins.map { formatShape($0.shape) }.joined(separator: ", "))", cause: error)
        }
        nodes.append(node)
        return .tensor(name)
    }

    func shape(_ t: String) -> [Int] { types[t]?.shape ?? [] }

    /// The nodes, with the tensor `result` renamed `output` and its producer named `finalName`;
    /// [] when `result` is a layer input (the layer is an identity).
    func finish(result: String, output: String, finalName: String) -> [Node] {
        guard nodes.contains(where: { $0.outputs.contains(result) }) else { return [] }
        return nodes.map { n in
            var n = n
            n.inputs = n.inputs.map { $0 == result ? output : $0 }
            if n.outputs.contains(result) {
                n.outputs = n.outputs.map { $0 == result ? output : $0 }
                n.name = finalName
            }
            return n
        }
    }

    // MARK: Expressions

    /// Lowers an expression, with parameters and closure variables bound.
    mutating func lower(_ e: PythonExpression, parameters: [String: LoweredValue], closure: [String: LoweredValue],
                        depth: Int = 0) throws(PythonLoweringFailure) -> LoweredValue {
        guard depth < 200 else { throw PythonLoweringFailure("expression nested too deeply") }
        func sub(_ x: PythonExpression) throws(PythonLoweringFailure) -> LoweredValue {
            try lower(x, parameters: parameters, closure: closure, depth: depth + 1)
        }
        switch e {
        case let .parameter(p):
            guard let v = parameters[p] else { throw PythonLoweringFailure("parameter '\(p)' has no value in the config (not an input, not in 'arguments', no stored default)") }
            return v
        case let .closure(c):
            guard let v = closure[c] else { throw PythonLoweringFailure("closure variable '\(c)' has no stored value") }
            return v
        case let .constant(c):
            if case let .slice(a, b, s) = c { return .slice(a, b, s) }
            return .constant(c)
        case let .global(g):
            return .name(g)
        case let .attribute(base, attr):
            let b = try sub(base)
            guard case let .name(n) = b else { throw PythonLoweringFailure("attribute '.\(attr)' of a value (tensor attributes and methods are not supported)") }
            return .name(n + "." + attr)
        case let .tuple(items):
            var out: [LoweredValue] = []
            for i in items { out.append(try sub(i)) }
            return .sequence(out, isTuple: true)
        case let .list(items):
            var out: [LoweredValue] = []
            for i in items { out.append(try sub(i)) }
            return .sequence(out, isTuple: false)
        case let .slice(a, b, c):
            func part(_ x: PythonExpression?) throws(PythonLoweringFailure) -> PythonConstant {
                guard let x else { return .none }
                let v = resolveName(try sub(x))
                guard case let .constant(k) = v, k == .none || k.integer != nil else {
                    throw PythonLoweringFailure("slice bound \(x) is not a constant integer")
                }
                return k
            }
            return .slice(try part(a), try part(b), try part(c))
        case let .unary(op, a):
            let v = resolveName(try sub(a))
            switch (op, v) {
            case (.positive, _): return v
            case let (.negative, .constant(c)):
                if let i = c.integer {
                    // -Int64.min does not fit: refuse rather than trap on a hostile constant.
                    let (n, overflow) = Int64(0).subtractingReportingOverflow(Int64(i))
                    guard !overflow else { throw PythonLoweringFailure("-\(c) overflows a 64-bit integer") }
                    return .constant(.int(n))
                }
                if let d = c.number { return .constant(.float(-d)) }
                throw PythonLoweringFailure("-\(c)")
            case let (.negative, .tensor(t)): return try emit(.unary(UnaryAttributes(.neg)), [t])
            default: throw PythonLoweringFailure("unary \(op.rawValue) on \(describe(v))")
            }
        case let .binary(op, a, b):
            return try binary(op, resolveName(try sub(a)), resolveName(try sub(b)))
        case let .index(base, index):
            return try subscriptValue(try sub(base), resolveName(try sub(index)))
        case let .call(f, args, kwargs):
            let callee = try sub(f)
            guard case let .name(dotted) = callee else { throw PythonLoweringFailure("call of a value that is not a function name") }
            var a: [LoweredValue] = []
            for x in args { a.append(try sub(x)) }
            var k: [(String, LoweredValue)] = []
            for x in kwargs { k.append((x.name, try sub(x.value))) }
            return try call(dotted, args: a, kwargs: k)
        }
    }

    /// Named constants (`np.pi`, `tf.newaxis`); other names stay names.
    func resolveName(_ v: LoweredValue) -> LoweredValue {
        guard case let .name(n) = v else { return v }
        switch n {
        case "np.pi", "numpy.pi", "math.pi", "tf.experimental.numpy.pi": return .constant(.float(Double.pi))
        case "np.e", "numpy.e", "math.e": return .constant(.float(M_E_VALUE))
        case "np.newaxis", "numpy.newaxis", "tf.newaxis", "tensorflow.newaxis", "None": return .constant(.none)
        case "np.inf", "numpy.inf", "math.inf": return .constant(.float(.infinity))
        default: return v
        }
    }

    func describe(_ v: LoweredValue) -> String {
        switch v {
        case let .tensor(t): return "a tensor of shape \(formatShape(shape(t)))"
        case let .constant(c): return "the constant \(c)"
        case .sequence: return "a tuple or list"
        case .slice: return "a slice"
        case let .name(n): return "'\(n)'"
        }
    }

    // MARK: Constants as tensors

    /// A nested list/tuple of numbers as a flat array and shape, nil when not rectangular numbers.
    static func numericArray(_ c: PythonConstant) -> (values: [Float], shape: [Int])? {
        if let n = c.number { return ([Float(n)], []) }
        let items: [PythonConstant]
        switch c {
        case let .tuple(i), let .list(i): items = i
        default: return nil
        }
        guard !items.isEmpty, items.count <= 1 << 20 else { return nil }
        var values: [Float] = []
        var inner: [Int]? = nil
        for i in items {
            guard let (v, s) = numericArray(i) else { return nil }
            if let inner, inner != s { return nil }
            inner = s
            values += v
            guard values.count <= 1 << 20 else { return nil }
        }
        return (values, [items.count] + (inner ?? []))
    }

    func constantValue(_ v: LoweredValue) -> PythonConstant? { PythonLowering.constantValue(v) }

    /// The value as a constant when it holds no tensor (lists and tuples of constants included).
    static func constantValue(_ v: LoweredValue, depth: Int = 0) -> PythonConstant? {
        guard depth < 64 else { return nil }
        switch v {
        case let .constant(c): return c
        case let .sequence(items, isTuple):
            var out: [PythonConstant] = []
            for i in items {
                guard let c = constantValue(i, depth: depth + 1) else { return nil }
                out.append(c)
            }
            return isTuple ? .tuple(out) : .list(out)
        default: return nil
        }
    }

    // MARK: Arithmetic

    static func fold(_ op: PythonBinaryOperator, _ a: PythonConstant, _ b: PythonConstant) -> PythonConstant? {
        if let x = a.integer, let y = b.integer {
            switch op {
            case .add: let (r, o) = x.addingReportingOverflow(y); return o ? nil : .int(Int64(r))
            case .subtract: let (r, o) = x.subtractingReportingOverflow(y); return o ? nil : .int(Int64(r))
            case .multiply: let (r, o) = x.multipliedReportingOverflow(by: y); return o ? nil : .int(Int64(r))
            case .floorDivide:
                guard y != 0, !(x == .min && y == -1) else { return nil }
                let q = x / y
                return .int(Int64((x % y != 0 && (x < 0) != (y < 0)) ? q - 1 : q))
            case .modulo:
                guard y != 0, !(x == .min && y == -1) else { return nil }
                let r = x % y
                return .int(Int64(r != 0 && (r < 0) != (y < 0) ? r + y : r))
            case .trueDivide: return y == 0 ? nil : .float(Double(x) / Double(y))
            default: break
            }
        }
        guard let x = a.number, let y = b.number else { return nil }
        switch op {
        case .add: return .float(x + y)
        case .subtract: return .float(x - y)
        case .multiply: return .float(x * y)
        case .trueDivide: return y == 0 ? nil : .float(x / y)
        case .power: return .float(Foundation_pow(x, y))
        default: return nil
        }
    }

    mutating func constantTensor(_ c: PythonConstant) throws(PythonLoweringFailure) -> ConstantTensor {
        guard let (values, shape) = PythonLowering.numericArray(c) else {
            throw PythonLoweringFailure("the constant \(c) is not a number or a rectangular list of numbers")
        }
        return ConstantTensor(shape: shape.isEmpty ? [1] : shape, floats: values)
    }

    /// `a op b` with NumPy broadcasting, as TensorFlow computes it on float32 tensors.
    mutating func binary(_ op: PythonBinaryOperator, _ a: LoweredValue, _ b: LoweredValue) throws(PythonLoweringFailure) -> LoweredValue {
        let ca = constantValue(a), cb = constantValue(b)
        if let ca, let cb {
            guard let r = PythonLowering.fold(op, ca, cb) else { throw PythonLoweringFailure("constant arithmetic \(ca) \(op.rawValue) \(cb)") }
            return .constant(r)
        }
        if op == .matrixMultiply {
            guard case let .tensor(x) = a, case let .tensor(y) = b else { throw PythonLoweringFailure("@ needs two tensors") }
            return try emit(.matmul(MatMulAttributes()), [x, y])
        }
        let fn: BinaryFunction
        switch op {
        case .add: fn = .add
        case .subtract: fn = .sub
        case .multiply: fn = .mul
        case .trueDivide: fn = .realDiv
        case .floorDivide: fn = .floorDiv
        case .modulo: fn = .mod
        case .power: fn = .pow
        default: throw PythonLoweringFailure("operator \(op.rawValue) on tensors (bitwise operators are not float32 arithmetic)")
        }
        return try binaryFunction(fn, a, b)
    }

    /// A `BinaryFunction` of two values, at least one a tensor.
    mutating func binaryFunction(_ fn: BinaryFunction, _ a: LoweredValue, _ b: LoweredValue) throws(PythonLoweringFailure) -> LoweredValue {
        switch (a, b) {
        case let (.tensor(x), .tensor(y)):
            return try emit(.binary(fn), [x, y])
        case let (.tensor(x), other):
            guard let c = constantValue(other) else { throw PythonLoweringFailure("\(fn.rawValue) of a tensor and \(describe(other))") }
            if let s = c.number, PythonLowering.numericArray(c)?.shape == [] {
                switch fn {
                case .add: return try emit(.activation(.linear(alpha: 1, beta: Float(s))), [x])
                case .sub: return try emit(.activation(.linear(alpha: 1, beta: Float(-s))), [x])
                case .mul: return try emit(.activation(.linear(alpha: Float(s), beta: 0)), [x])
                case .pow: return try emit(.unary(UnaryAttributes(.power, alpha: Float(s))), [x])
                default: break
                }
            }
            return try emit(.binary(fn), [x], weights: ["y": try constantTensor(c)])
        case let (other, .tensor(y)):
            guard let c = constantValue(other) else { throw PythonLoweringFailure("\(fn.rawValue) of \(describe(other)) and a tensor") }
            if let s = c.number, PythonLowering.numericArray(c)?.shape == [] {
                switch fn {
                case .add: return try emit(.activation(.linear(alpha: 1, beta: Float(s))), [y])
                case .mul: return try emit(.activation(.linear(alpha: Float(s), beta: 0)), [y])
                case .sub: return try emit(.activation(.linear(alpha: -1, beta: Float(s))), [y])
                case .maximum, .minimum: return try emit(.binary(fn), [y], weights: ["y": try constantTensor(c)])
                default: break
                }
            }
            let k = try emit(.constant, [], weights: ["value": try constantTensor(c)])
            guard case let .tensor(kt) = k else { throw PythonLoweringFailure("internal") }
            return try emit(.binary(fn), [kt, y])
        default:
            throw PythonLoweringFailure("\(fn.rawValue) of \(describe(a)) and \(describe(b))")
        }
    }

    // MARK: Indexing

    enum IndexItem { case index(Int), slice(Int?, Int?, Int?), newAxis, ellipsis }

    func indexItems(_ v: LoweredValue) throws(PythonLoweringFailure) -> [IndexItem] {
        func one(_ v: LoweredValue) throws(PythonLoweringFailure) -> IndexItem {
            switch resolveName(v) {
            case let .slice(a, b, c):
                func opt(_ k: PythonConstant) throws(PythonLoweringFailure) -> Int? {
                    if k == .none { return nil }
                    guard let i = k.integer else { throw PythonLoweringFailure("slice bound \(k) is not an integer") }
                    return i
                }
                return .slice(try opt(a), try opt(b), try opt(c))
            case let .constant(c):
                switch c {
                case .none: return .newAxis
                case .ellipsis: return .ellipsis
                case let .slice(a, b, s): return try one(.slice(a, b, s))
                default:
                    guard let i = c.integer else { throw PythonLoweringFailure("index \(c) is not an integer, slice, None or ...") }
                    return .index(i)
                }
            case .tensor: throw PythonLoweringFailure("indexing with a tensor (gather) is not supported")
            default: throw PythonLoweringFailure("index \(describe(v)) is not an integer, slice, None or ... (lists are advanced indexing)")
            }
        }
        switch v {
        case let .sequence(items, true):
            var out: [IndexItem] = []
            for i in items { out.append(try one(i)) }
            return out
        case let .constant(.tuple(items)):
            var out: [IndexItem] = []
            for i in items { out.append(try one(.constant(i))) }
            return out
        default:
            return [try one(v)]
        }
    }

    /// NumPy basic indexing of a tensor (the batch axis must be kept whole).
    mutating func sliceTensor(_ t: String, _ items: [IndexItem]) throws(PythonLoweringFailure) -> LoweredValue {
        let s = shape(t)
        let r = s.count
        guard items.filter({ if case .ellipsis = $0 { return true }; return false }).count <= 1 else {
            throw PythonLoweringFailure("an index can only have a single ellipsis")
        }
        let consuming = items.filter { if case .newAxis = $0 { return false }; if case .ellipsis = $0 { return false }; return true }.count
        guard consuming <= r else { throw PythonLoweringFailure("too many indices (\(consuming)) for a tensor of shape \(formatShape(s))") }
        var expanded: [IndexItem] = []
        for i in items {
            if case .ellipsis = i {
                expanded += Array(repeating: .slice(nil, nil, nil), count: r - consuming)
            } else {
                expanded.append(i)
            }
        }
        while expanded.filter({ if case .newAxis = $0 { return false }; return true }).count < r { expanded.append(.slice(nil, nil, nil)) }
        var begin: [Int] = [], end: [Int] = [], stride: [Int] = [], bm: [Bool] = [], em: [Bool] = [], sq: [Bool] = []
        var newAxes: [Int] = []
        var outAxis = 0
        var axis = 0
        for item in expanded {
            switch item {
            case .newAxis:
                newAxes.append(outAxis); outAxis += 1
            case let .index(i):
                let n = s[axis]
                guard i >= -n, i < n else { throw PythonLoweringFailure("index \(i) is out of range for axis \(axis) of size \(n)") }
                begin.append(i); end.append(i + 1); stride.append(1); bm.append(false); em.append(false); sq.append(true)
                axis += 1
            case let .slice(a, b, c):
                let step = c ?? 1
                guard step != 0, step != Int.min else { throw PythonLoweringFailure("slice step 0") }
                begin.append(a ?? 0); end.append(b ?? 0); stride.append(step)
                bm.append(a == nil); em.append(b == nil); sq.append(false)
                axis += 1; outAxis += 1
            case .ellipsis: break
            }
        }
        // The batch axis (input axis 0) must be kept whole, and no axis may be inserted before it.
        guard bm[0], em[0], stride[0] == 1, !sq[0], !newAxes.contains(0) else {
            throw PythonLoweringFailure("the index touches the batch axis (its first item must be ':')")
        }
        let attrs = SliceByIndexAttributes(begin: begin, end: end, stride: stride, beginMask: bm, endMask: em, squeezeMask: sq)
        var result: LoweredValue = .tensor(t)
        let isWhole = bm.allSatisfy { $0 } && em.allSatisfy { $0 } && stride.allSatisfy { $0 == 1 } && !sq.contains(true)
        if !isWhole {
            guard let resolved = attrs.resolve(s), resolved.allSatisfy({ $0.count > 0 }) else {
                throw PythonLoweringFailure("the slice selects no elements of a tensor of shape \(formatShape(s))")
            }
            if stride.allSatisfy({ $0 == 1 }), !sq.contains(true) {
                // A contiguous window: the `crop` op (which Core ML NeuralNetwork files can hold).
                result = try emit(.crop(crops: zip(resolved, s).map { [$0.start, $1 - $0.start - $0.count] }), [t])
            } else {
                result = try emit(.sliceByIndex(attrs), [t])
            }
        }
        if !newAxes.isEmpty, case let .tensor(x) = result {
            result = try emit(.expandDims(axes: newAxes), [x])
        }
        return result
    }

    mutating func subscriptValue(_ base: LoweredValue, _ index: LoweredValue) throws(PythonLoweringFailure) -> LoweredValue {
        switch base {
        case let .tensor(t):
            return try sliceTensor(t, try indexItems(index))
        case let .sequence(items, isTuple):
            if case let .constant(c) = index, let i = c.integer {
                guard i >= -items.count, i < items.count else { throw PythonLoweringFailure("index \(i) out of range for a sequence of \(items.count)") }
                return items[i < 0 ? i + items.count : i]
            }
            if case let .slice(a, b, s) = index, s == .none || s == .int(1) {
                func clamp(_ k: PythonConstant, _ d: Int) -> Int {
                    guard let i = k.integer else { return d }
                    let j = i < 0 ? i + items.count : i
                    return min(max(j, 0), items.count)
                }
                let lo = clamp(a, 0), hi = clamp(b, items.count)
                return .sequence(lo < hi ? Array(items[lo..<hi]) : [], isTuple: isTuple)
            }
            throw PythonLoweringFailure("index \(describe(index)) of a sequence")
        case let .constant(c):
            let items: [PythonConstant]
            switch c {
            case let .tuple(i), let .list(i): items = i
            default: throw PythonLoweringFailure("subscript of the constant \(c)")
            }
            return try subscriptValue(.sequence(items.map { .constant($0) }, isTuple: true), index)
        default:
            throw PythonLoweringFailure("subscript of \(describe(base))")
        }
    }

    // MARK: Calls

    /// A call of a library function by its dotted name.
    mutating func call(_ dotted: String, args: [LoweredValue], kwargs: [(String, LoweredValue)]) throws(PythonLoweringFailure) -> LoweredValue {
        guard let (library, function) = PythonFunctionTable.resolve(dotted) else {
            throw PythonLoweringFailure("calls \(dotted)(), which is not a Keras backend, TensorFlow or keras.ops function")
        }
        guard let spec = PythonFunctionTable.spec(library, function) else {
            throw PythonLoweringFailure("calls \(dotted)(), which has no IR lowering")
        }
        var bound: [String: LoweredValue] = [:]
        guard args.count <= spec.parameters.count else {
            throw PythonLoweringFailure("\(dotted)() takes at most \(spec.parameters.count) arguments, \(args.count) given")
        }
        for (p, a) in zip(spec.parameters, args) { bound[p] = a }
        for (k, v) in kwargs {
            guard spec.parameters.contains(k) || spec.aliases[k] != nil else {
                throw PythonLoweringFailure("\(dotted)() argument '\(k)' is not supported")
            }
            let key = spec.aliases[k] ?? k
            guard bound[key] == nil || k == "name" else { throw PythonLoweringFailure("\(dotted)() got '\(k)' twice") }
            bound[key] = v
        }
        for (p, d) in spec.defaults where bound[p] == nil { bound[p] = .constant(d) }
        for p in spec.parameters where bound[p] == nil && p != "name" {
            throw PythonLoweringFailure("\(dotted)() is missing its argument '\(p)'")
        }
        var b = PythonCallArguments(function: dotted, values: bound.mapValues { resolveName($0) })
        return try lowerCall(spec.kind, &b)
    }
}

/// Bound arguments of one call, with typed accessors.
struct PythonCallArguments {
    let function: String
    let values: [String: LoweredValue]

    func fail(_ what: String) -> PythonLoweringFailure { PythonLoweringFailure("\(function)(): \(what)") }

    func tensor(_ p: String) throws(PythonLoweringFailure) -> String {
        guard case let .tensor(t)? = values[p] else { throw fail("'\(p)' must be a tensor") }
        return t
    }
    func value(_ p: String) -> LoweredValue? { values[p] }
    func constant(_ p: String) -> PythonConstant? {
        values[p].flatMap { PythonLowering.constantValue($0) }
    }
    func isNone(_ p: String) -> Bool { constant(p) == PythonConstant.none || values[p] == nil }
    func number(_ p: String) throws(PythonLoweringFailure) -> Double {
        guard let n = constant(p)?.number else { throw fail("'\(p)' must be a constant number") }
        return n
    }
    func bool(_ p: String) throws(PythonLoweringFailure) -> Bool {
        guard let c = constant(p) else { throw fail("'\(p)' must be a constant") }
        if case let .bool(b) = c { return b }
        if let n = c.number { return n != 0 }
        if c == .none { return false }
        throw fail("'\(p)' must be True or False")
    }
    /// An int or a list/tuple of ints (nil for None).
    func ints(_ p: String) throws(PythonLoweringFailure) -> [Int]? {
        guard let v = values[p] else { return nil }
        switch v {
        case let .constant(c):
            if c == .none { return nil }
            if let i = c.integer { return [i] }
            switch c {
            case let .tuple(items), let .list(items):
                var out: [Int] = []
                for i in items {
                    guard let k = i.integer else { throw fail("'\(p)' must hold integers") }
                    out.append(k)
                }
                return out
            default: throw fail("'\(p)' must be an integer or a list of integers")
            }
        case let .sequence(items, _):
            var out: [Int] = []
            for i in items {
                guard case let .constant(c) = i, let k = c.integer else { throw fail("'\(p)' must hold constant integers") }
                out.append(k)
            }
            return out
        default: throw fail("'\(p)' must be an integer or a list of integers")
        }
    }
    func tensors(_ p: String) throws(PythonLoweringFailure) -> [String] {
        if case let .tensor(t)? = values[p] { return [t] }  // a recorded one-item list
        guard case let .sequence(items, _)? = values[p] else { throw fail("'\(p)' must be a list of tensors") }
        var out: [String] = []
        for i in items {
            guard case let .tensor(t) = i else { throw fail("'\(p)' must be a list of tensors") }
            out.append(t)
        }
        return out
    }
}

/// The value of e (Foundation's M_E is not portable to every libc module map).
let M_E_VALUE = 2.718281828459045

@inline(__always) func Foundation_pow(_ x: Double, _ y: Double) -> Double {
    #if canImport(Glibc)
    return Glibc.pow(x, y)
    #else
    return Darwin.pow(x, y)
    #endif
}

#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
