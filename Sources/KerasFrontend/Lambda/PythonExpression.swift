// A Python expression recovered from a Lambda layer's bytecode by `PythonBytecodeEvaluator`
// (symbolically: nothing is executed), and its rendering as Python source text.

import Foundation

/// A constant of a recovered expression (a `co_consts` entry, a config value, or a value Keras
/// stored in the Lambda config's `arguments`, `defaults` or `closure`).
public indirect enum PythonConstant: Hashable, Sendable, CustomStringConvertible {
    case none
    case bool(Bool)
    case int(Int64)
    case float(Double)
    case string(String)
    case ellipsis
    case tuple([PythonConstant])
    case list([PythonConstant])
    /// `slice(start, stop, step)` (a CPython 3.14 constant, or a TFOpLambda slice spec).
    case slice(PythonConstant, PythonConstant, PythonConstant)
    /// Any other value (a code object, bytes, a set, a dict, a long int…), as Python prints it.
    case opaque(String)

    /// Python's `repr`.
    public var description: String {
        switch self {
        case .none: return "None"
        case let .bool(b): return b ? "True" : "False"
        case let .int(i): return String(i)
        case let .float(d): return PythonRepr.floatRepr(d)
        case let .string(s): return PythonRepr.strRepr(s)
        case .ellipsis: return "Ellipsis"
        case let .tuple(items):
            return "(" + items.map(\.description).joined(separator: ", ") + (items.count == 1 ? ",)" : ")")
        case let .list(items): return "[" + items.map(\.description).joined(separator: ", ") + "]"
        case let .slice(a, b, c): return "slice(\(a), \(b), \(c))"
        case let .opaque(s): return s
        }
    }

    /// The value as a number (bools count as 0/1, as Python's arithmetic does).
    public var number: Double? {
        switch self {
        case let .int(i): return Double(i)
        case let .float(d): return d
        case let .bool(b): return b ? 1 : 0
        default: return nil
        }
    }

    /// The value as an exact integer (bools and integral floats are not accepted).
    public var integer: Int? {
        if case let .int(i) = self { return Int(exactly: i) }
        return nil
    }

    /// Converts a marshalled constant.
    init(_ v: MarshalValue, depth: Int = 0) {
        guard depth < 50 else { self = .opaque("..."); return }
        switch v {
        case .none: self = .none
        case let .bool(b): self = .bool(b)
        case let .int(i): self = .int(i)
        case let .float(d): self = .float(d)
        case let .str(s): self = .string(s)
        case .ellipsis: self = .ellipsis
        case let .tuple(items): self = .tuple(items.prefix(10_000).map { PythonConstant($0, depth: depth + 1) })
        case let .list(items): self = .list(items.prefix(10_000).map { PythonConstant($0, depth: depth + 1) })
        case let .slice(a, b, c):
            self = .slice(PythonConstant(a, depth: depth + 1), PythonConstant(b, depth: depth + 1), PythonConstant(c, depth: depth + 1))
        default: self = .opaque(PythonRepr.repr(v, limit: 200))
        }
    }

    /// Converts a JSON value as Keras wrote it into a config (`arguments`, `defaults`, `closure`):
    /// numbers without a fraction become ints, lists become lists.
    init(json v: Any?, depth: Int = 0) {
        guard depth < 50, let v else { self = .none; return }
        switch v {
        case is NSNull: self = .none
        case let s as String: self = .string(s)
        case let n as NSNumber:
            let t = String(cString: n.objCType)
            // KerasJSON and JSONSerialization keep no int/float distinction reliably: whole
            // numbers are read as ints (Keras configs write axes, sizes and flags as ints).
            let d = n.doubleValue
            if t == "c" { self = .bool(n.boolValue) } else if d == d.rounded(), abs(d) < 9.0e15, let i = Int64(exactly: d) {
                self = .int(i)
            } else {
                self = .float(d)
            }
        case let a as [Any]: self = .list(a.prefix(10_000).map { PythonConstant(json: $0, depth: depth + 1) })
        default: self = .opaque(LambdaFunctionDecoder.jsonRepr(v, depth: 0))
        }
    }

    /// Converts a `KerasJSON` value (numbers integral in value become ints).
    init(keras v: KerasJSON, depth: Int = 0) {
        guard depth < 50 else { self = .opaque("..."); return }
        switch v {
        case .null: self = .none
        case let .bool(b): self = .bool(b)
        case let .number(d):
            if d == d.rounded(), abs(d) < 9.0e15, let i = Int64(exactly: d) { self = .int(i) } else { self = .float(d) }
        case let .string(s): self = .string(s)
        case let .array(a): self = .list(a.prefix(10_000).map { PythonConstant(keras: $0, depth: depth + 1) })
        case .object: self = .opaque(v.description)
        }
    }
}

/// Python's binary operators (the ones bytecode has for numbers and tensors).
public enum PythonBinaryOperator: String, Hashable, Sendable, CaseIterable {
    case add = "+", subtract = "-", multiply = "*", trueDivide = "/", floorDivide = "//", modulo = "%"
    case power = "**", matrixMultiply = "@", and = "&", or = "|", xor = "^", lshift = "<<", rshift = ">>"

    /// Python's precedence (higher binds tighter).
    var precedence: Int {
        switch self {
        case .or: return 1
        case .xor: return 2
        case .and: return 3
        case .lshift, .rshift: return 4
        case .add, .subtract: return 5
        case .multiply, .trueDivide, .floorDivide, .modulo, .matrixMultiply: return 6
        case .power: return 8
        }
    }
}

/// Python's unary operators.
public enum PythonUnaryOperator: String, Hashable, Sendable {
    case negative = "-", positive = "+", invert = "~"
}

/// A keyword argument of a call.
public struct PythonKeywordArgument: Hashable, Sendable {
    public var name: String
    public var value: PythonExpression
    public init(_ name: String, _ value: PythonExpression) { self.name = name; self.value = value }
}

/// An expression tree recovered from bytecode, over the function's parameters, its closure
/// variables, constants and global names.
public indirect enum PythonExpression: Hashable, Sendable, CustomStringConvertible {
    /// A parameter of the function (`x`), bound to the layer's inputs or its `arguments`.
    case parameter(String)
    /// A variable the function closes over, bound to the config's stored closure value.
    case closure(String)
    case constant(PythonConstant)
    /// A global name (`K`, `tf`, `keras`, `abs`).
    case global(String)
    case attribute(PythonExpression, String)
    case binary(PythonBinaryOperator, PythonExpression, PythonExpression)
    case unary(PythonUnaryOperator, PythonExpression)
    case index(PythonExpression, PythonExpression)
    case slice(PythonExpression?, PythonExpression?, PythonExpression?)
    case tuple([PythonExpression])
    case list([PythonExpression])
    case call(PythonExpression, [PythonExpression], [PythonKeywordArgument])

    /// Python source text: `(x + 1) * 127.5`, `x[:, 2:-2, 2:-2]`, `K.mean(x, axis=1, keepdims=keepdims)`.
    public var description: String { render(0) }

    /// The dotted name of a global or attribute chain (`tf.math.reduce_mean`), nil otherwise.
    public var dottedName: String? {
        switch self {
        case let .global(g): return g
        case let .attribute(base, name): return base.dottedName.map { $0 + "." + name }
        default: return nil
        }
    }

    private func render(_ context: Int) -> String {
        switch self {
        case let .parameter(n), let .closure(n), let .global(n): return n
        case let .constant(c):
            if case let .int(i) = c, i < 0, context > 7 { return "(\(i))" }
            if case let .float(d) = c, d.sign == .minus, context > 7 { return "(\(c))" }
            return c.description
        case let .attribute(base, name): return base.render(9) + "." + name
        case let .binary(op, a, b):
            let p = op.precedence
            // ** is right-associative; the others left.
            let text = op == .power ? a.render(p + 1) + " ** " + b.render(p)
                : a.render(p) + " \(op.rawValue) " + b.render(p + 1)
            return p < context ? "(" + text + ")" : text
        case let .unary(op, a):
            let text = op.rawValue + a.render(7)
            return 7 < context ? "(" + text + ")" : text
        case let .index(base, index):
            let inner: String
            if case let .constant(.tuple(cs)) = index, !cs.isEmpty {  // x[..., 0]: a constant tuple
                inner = cs.map { PythonExpression.constant($0).renderIndex() }.joined(separator: ", ") + (cs.count == 1 ? "," : "")
            } else if case let .tuple(items) = index, !items.isEmpty {
                inner = items.map { $0.renderIndex() }.joined(separator: ", ") + (items.count == 1 ? "," : "")
            } else {
                inner = index.renderIndex()
            }
            return base.render(9) + "[" + inner + "]"
        case .slice:
            return "slice(" + sliceParts.map { $0?.description ?? "None" }.joined(separator: ", ") + ")"
        case let .tuple(items):
            return "(" + items.map { $0.render(0) }.joined(separator: ", ") + (items.count == 1 ? ",)" : ")")
        case let .list(items): return "[" + items.map { $0.render(0) }.joined(separator: ", ") + "]"
        case let .call(f, args, kwargs):
            let parts = args.map { $0.render(0) } + kwargs.map { "\($0.name)=\($0.value.render(0))" }
            return f.render(9) + "(" + parts.joined(separator: ", ") + ")"
        }
    }

    private var sliceParts: [PythonExpression?] {
        guard case let .slice(a, b, c) = self else { return [] }
        func clean(_ e: PythonExpression?) -> PythonExpression? { e == .constant(.none) ? nil : e }
        return [clean(a), clean(b), clean(c)]
    }

    private func renderIndex() -> String {
        if case .slice = self {
            let p = sliceParts
            var s = (p[0]?.render(0) ?? "") + ":" + (p[1]?.render(0) ?? "")
            if let step = p[2] { s += ":" + step.render(0) }
            return s
        }
        if case .constant(.ellipsis) = self { return "..." }
        if case let .constant(.slice(a, b, c)) = self {
            return PythonExpression.slice(.constant(a), .constant(b), .constant(c)).renderIndex()
        }
        return render(0)
    }
}
