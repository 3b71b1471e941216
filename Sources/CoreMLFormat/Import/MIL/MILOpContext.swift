// One MIL operation while it is imported: typed access to its named arguments.
import MLGraph

/// Maps one MIL op to IR nodes; returns one value per op output.
typealias MILOpMapper = (MILOpContext) throws -> [MILValue]

struct MILOpContext {
    let op: Spec.MILSpec.Operation
    let importer: MILGraphImporter
    var b: ImportBuilder { importer.b }

    /// The op's name: its first output's name (MIL ops have no name of their own).
    var name: String { op.outputs.first?.name ?? op.type }

    // MARK: Arguments

    func has(_ param: String) -> Bool { !(op.inputs[param]?.arguments.isEmpty ?? true) || (param != "name" && op.attributes[param] != nil) }

    /// Every binding of `param` (variadic parameters such as concat's `values`), as (name, value).
    /// A parameter given as an op attribute (the iOS16 constexpr ops keep their values there) is
    /// one constant binding.
    func bindings(_ param: String) throws -> [(String, MILValue)] {
        guard let arg = op.inputs[param] else {
            if param != "name", let v = op.attributes[param] {
                return [("\(name)__\(param)", .constant(try MILConst.decode(v, blobs: importer.blobs)))]
            }
            return []
        }
        return try arg.arguments.enumerated().map { i, binding -> (String, MILValue) in
            switch binding.binding {
            case let .name(n)?:
                guard let v = importer.values[n] else { throw LayerImportFailure("reads '\(n)' (\(param)), which is not defined before it") }
                return (n, v)
            case let .value(v)?:
                return ("\(name)__\(param)\(i)", .constant(try MILConst.decode(v, blobs: importer.blobs)))
            case nil:
                throw LayerImportFailure("has an empty binding for \(param)")
            }
        }
    }

    /// The single binding of `param`; nil when absent.
    func value(_ param: String) throws -> (String, MILValue)? {
        let all = try bindings(param)
        guard all.count <= 1 else { throw LayerImportFailure("binds \(all.count) values to \(param); expected one") }
        return all.first
    }

    /// `param` as an IR tensor (constants become `constant` nodes).
    func tensor(_ param: String) throws -> String {
        guard let (n, v) = try value(param) else { throw LayerImportFailure("has no \(param)") }
        return try importer.tensor(named: n, value: v)
    }

    /// Every binding of `param` as IR tensors.
    func tensors(_ param: String) throws -> [String] {
        try bindings(param).map { try importer.tensor(named: $0.0, value: $0.1) }
    }

    /// `param` as a constant, nil when absent.
    func constant(_ param: String) throws -> MILConst? {
        guard let (n, v) = try value(param) else { return nil }
        guard case let .constant(c) = v else {
            throw LayerImportFailure("needs \(param) known at import, but '\(n)' is computed at run time")
        }
        return c
    }

    func requiredConstant(_ param: String) throws -> MILConst {
        guard let c = try constant(param) else { throw LayerImportFailure("has no \(param)") }
        return c
    }

    func ints(_ param: String) throws -> [Int]? {
        guard let c = try constant(param) else { return nil }
        return try c.doubles().map { d in
            guard let i = Int(exactly: d), abs(i) <= Node.maxCountAttribute else { throw LayerImportFailure("has \(param) value \(d); expected an integer") }
            return i
        }
    }

    func int(_ param: String, default d: Int? = nil) throws -> Int {
        guard let v = try ints(param) else {
            if let d { return d }
            throw LayerImportFailure("has no \(param)")
        }
        guard v.count == 1 else { throw LayerImportFailure("has \(param) \(v); expected one integer") }
        return v[0]
    }

    func float(_ param: String, default d: Float? = nil) throws -> Float {
        guard let c = try constant(param) else {
            if let d { return d }
            throw LayerImportFailure("has no \(param)")
        }
        let v = c.floats()
        guard v.count == 1 else { throw LayerImportFailure("has \(param) of \(v.count) values; expected one") }
        return v[0]
    }

    func bool(_ param: String, default d: Bool) throws -> Bool {
        guard let c = try constant(param) else { return d }
        let v = c.doubles()
        guard v.count == 1 else { throw LayerImportFailure("has \(param) of \(v.count) values; expected one bool") }
        return v[0] != 0
    }

    func bools(_ param: String) throws -> [Bool]? {
        try constant(param).map { $0.doubles().map { $0 != 0 } }
    }

    func string(_ param: String, default d: String? = nil) throws -> String {
        guard let c = try constant(param) else {
            if let d { return d }
            throw LayerImportFailure("has no \(param)")
        }
        guard let s = c.strings, s.count == 1 else { throw LayerImportFailure("has \(param) that is not one string") }
        return s[0]
    }

    /// The IR type of a tensor.
    func type(_ t: String) -> TensorType? { b.types[t] }
    func shape(_ t: String) -> [Int] { b.shape(t) }

    /// The MIL type of output `i`.
    func outputType(_ i: Int = 0) throws -> MILTensorType? {
        guard i < op.outputs.count else { return nil }
        return try MILTypes.tensorType(op.outputs[i].type)
    }

    /// The name of output `i`.
    func outputName(_ i: Int = 0) -> String { i < op.outputs.count ? op.outputs[i].name : "\(name)__\(i)" }

    // MARK: Emitting

    /// Emits `irOp` on `ins`; its output is named after MIL output `i`.
    func emit(_ irOp: Op, _ ins: [String], weights: [String: ConstantTensor] = [:], output i: Int = 0) throws -> MILValue {
        .tensor(try b.emit(outputName(i), irOp, ins, output: outputName(i), weights: weights))
    }

    /// Emits a helper node (not an op output) named `<op>__<suffix>`.
    func helper(_ suffix: String, _ irOp: Op, _ ins: [String], weights: [String: ConstantTensor] = [:]) throws -> String {
        try b.emit(name + "__" + suffix, irOp, ins, weights: weights)
    }

    /// The rank of tensor `t` (static in the IR).
    func rank(_ t: String) -> Int { shape(t).count }

    /// Normalises a possibly negative axis for rank `r`.
    func axis(_ a: Int, rank r: Int, _ what: String = "axis") throws -> Int {
        let v = a < 0 ? a + r : a
        guard v >= 0, v < max(r, 1) else { throw LayerImportFailure("has \(what) \(a) for a rank-\(r) tensor") }
        return v
    }

    /// `x` [N, C, spatial…] as channels-last [N, spatial…, C].
    func toChannelsLast(_ x: String) throws -> String {
        let r = rank(x)
        guard r >= 3 else { throw LayerImportFailure("needs a [N, C, spatial…] input, found rank \(r)") }
        return try helper("to_channels_last", .transpose(perm: [0] + Array(2..<r) + [1]), [x])
    }

    /// Channels-last `y` back to [N, C, spatial…], named after output `i`.
    func fromChannelsLast(_ y: String, output i: Int = 0) throws -> MILValue {
        let r = rank(y)
        return try emit(.transpose(perm: [0, r - 1] + Array(1..<(r - 1))), [y], output: i)
    }
}
