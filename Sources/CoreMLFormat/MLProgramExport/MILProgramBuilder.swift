// Emits MIL operations the way coremltools' MIL → proto exporter writes them: every parameter
// is its own `const` op (named `<op>_<parameter>_0`), every op carries a `name` attribute, and
// constants with 10 or more elements of a float / 8-bit type live in the weight file
// (coremltools `should_use_weight_file`), fp16 immediates as raw bytes.
import Foundation

/// The MIL element types the exporter writes.
enum MILScalar: Sendable {
    case float32, float16, int32, bool, string

    var dataType: Spec.MILSpec.DataType {
        switch self {
        case .float32: return .float32
        case .float16: return .float16
        case .int32: return .int32
        case .bool: return .bool
        case .string: return .string
        }
    }
}

struct MILProgramBuilder {
    /// Operations of the `main` block, in order.
    var operations: [Spec.MILSpec.Operation] = []
    var blobs = MILBlobWriter()
    /// Names in use (variables and ops share one namespace, as in coremltools).
    private var used = Set<String>()

    /// A fresh valid MIL identifier from `base` (characters outside [A-Za-z0-9_] become `_`).
    mutating func fresh(_ base: String) -> String {
        let clean = MILProgramBuilder.sanitize(base)
        var name = clean
        var i = 1
        while used.contains(name) { name = "\(clean)_\(i)"; i += 1 }
        used.insert(name)
        return name
    }

    /// Reserves `name` exactly (feature names); returns false if already taken.
    mutating func reserve(_ name: String) -> Bool { used.insert(name).inserted }

    /// Reserved names already given to a variable.
    private var defined = Set<String>()
    func isDefined(_ name: String) -> Bool { defined.contains(name) }
    mutating func markDefined(_ name: String) { defined.insert(name) }

    static func sanitize(_ s: String) -> String {
        var out = String(s.unicodeScalars.map { c -> Character in
            (("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c) || c == "_")
                ? Character(c) : "_"
        })
        if out.isEmpty || out.first!.isNumber { out = "_" + out }
        return out
    }

    // MARK: Types and values

    static func tensorType(_ scalar: MILScalar, _ shape: [Int]) -> Spec.MILSpec.ValueType {
        let dims = shape.map { d -> Spec.MILSpec.Dimension in
            d >= 0 ? Spec.MILSpec.Dimension(dimension: .constant(.init(size: UInt64(d))))
                : Spec.MILSpec.Dimension(dimension: .unknown(.init(variadic: false)))
        }
        return Spec.MILSpec.ValueType(type: .tensorType(Spec.MILSpec.TensorType(
            dataType: scalar.dataType, rank: Int64(shape.count), dimensions: dims)))
    }

    static func immediate(_ scalar: MILScalar, _ shape: [Int], _ tensor: Spec.MILSpec.TensorValue.ValueOneof) -> Spec.MILSpec.Value {
        Spec.MILSpec.Value(type: tensorType(scalar, shape),
                           value: .immediateValue(.init(value: .tensor(Spec.MILSpec.TensorValue(value: tensor)))))
    }

    static func stringValue(_ s: String) -> Spec.MILSpec.Value {
        immediate(.string, [], .strings(.init(values: [s])))
    }

    static func float16Bits(_ values: [Float]) -> [UInt16] {
        values.map { Float16($0).bitPattern }
    }

    // MARK: Constants

    /// Emits `const` named `name` holding `value` of `type`; returns the variable name.
    @discardableResult
    mutating func const(_ base: String, _ value: Spec.MILSpec.Value, _ type: Spec.MILSpec.ValueType) -> String {
        let name = fresh(base)
        operations.append(Spec.MILSpec.Operation(
            type: "const", outputs: [Spec.MILSpec.NamedValueType(name: name, type: type)],
            attributes: ["name": Self.stringValue(name), "val": value]))
        return name
    }

    /// A float tensor constant in `scalar` (float32 or float16); `shape` [] is a scalar.
    mutating func constFloats(_ base: String, _ values: [Float], shape: [Int], as scalar: MILScalar) -> String {
        let type = Self.tensorType(scalar, shape)
        let value: Spec.MILSpec.Value
        if values.count >= 10 {
            let offset = scalar == .float16 ? blobs.append(float16Bits: Self.float16Bits(values)) : blobs.append(float32: values)
            value = Spec.MILSpec.Value(type: type, value: .blobFileValue(.init(fileName: MLPackageWriter.weightFileReference, offset: offset)))
        } else if scalar == .float16 {
            var bytes: [UInt8] = []
            for b in Self.float16Bits(values) { bytes.append(UInt8(b & 0xff)); bytes.append(UInt8(b >> 8)) }
            value = Self.immediate(.float16, shape, .bytes(.init(values: bytes)))
        } else {
            value = Self.immediate(.float32, shape, .floats(.init(values: values)))
        }
        return const(base, value, type)
    }

    /// A constant whose value is already a blob reference or immediate (compression ops).
    mutating func constBlob(_ base: String, scalar: Spec.MILSpec.DataType, shape: [Int], offset: UInt64) -> String {
        let type = Spec.MILSpec.ValueType(type: .tensorType(Spec.MILSpec.TensorType(
            dataType: scalar, rank: Int64(shape.count),
            dimensions: shape.map { Spec.MILSpec.Dimension(dimension: .constant(.init(size: UInt64($0)))) })))
        return const(base, Spec.MILSpec.Value(type: type, value: .blobFileValue(.init(fileName: MLPackageWriter.weightFileReference, offset: offset))), type)
    }

    mutating func constInts(_ base: String, _ values: [Int], shape: [Int]? = nil) -> String {
        let s = shape ?? [values.count]
        return const(base, Self.immediate(.int32, s, .ints(.init(values: values.map { Int32(clamping: $0) }))), Self.tensorType(.int32, s))
    }

    mutating func constInt(_ base: String, _ value: Int) -> String { constInts(base, [value], shape: []) }

    mutating func constBool(_ base: String, _ value: Bool) -> String {
        const(base, Self.immediate(.bool, [], .bools(.init(values: [value]))), Self.tensorType(.bool, []))
    }

    mutating func constString(_ base: String, _ value: String) -> String {
        const(base, Self.stringValue(value), Self.tensorType(.string, []))
    }

    // MARK: Operations

    /// Appends an operation; `inputs` maps parameter names to variable names (several for
    /// variadic parameters such as `concat.values`). Returns the output variable names.
    @discardableResult
    mutating func op(_ type: String, name: String, inputs: [(String, [String])],
                     outputs: [(String, Spec.MILSpec.ValueType)]) -> [String] {
        var args: [String: Spec.MILSpec.Argument] = [:]
        for (param, vars) in inputs {
            args[param] = Spec.MILSpec.Argument(arguments: vars.map { Spec.MILSpec.Argument.Binding(binding: .name($0)) })
        }
        operations.append(Spec.MILSpec.Operation(
            type: type, inputs: args,
            outputs: outputs.map { Spec.MILSpec.NamedValueType(name: $0.0, type: $0.1) },
            attributes: ["name": Self.stringValue(name)]))
        return outputs.map(\.0)
    }
}
