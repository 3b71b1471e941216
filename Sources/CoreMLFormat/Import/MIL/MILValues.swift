// Values of an ML program while it is imported: constants known at import (MIL `const` ops,
// immediate bindings, blob-file values, `constexpr_*` results) and run-time tensors of the IR.
import Foundation
import MLGraph

/// A MIL value known at import: its shape, MIL element type and contents.
struct MILConst {
    var shape: [Int]
    var dataType: Spec.MILSpec.DataType
    /// Numeric contents as Double (exact for every int32 / fp16 / fp32 and for int64 up to 2^53),
    /// row-major. nil for string tensors and for float tensors kept as `tensor` only.
    var numbers: [Double]?
    var strings: [String]?
    /// Float contents kept in their storage (fp16 / fp32 blobs point into the mapped weight file).
    var tensor: ConstantTensor?
    /// For the non-zero data output of `constexpr_lut_to_sparse` / `_sparse_blockwise_shift_scale`:
    /// the whole sparse constant (dense shape, mask + compressed values) that
    /// `constexpr_sparse_to_dense` of the same mask takes as is (MILOpsConstexpr.swift).
    var sparseWhole: ConstantTensor? = nil

    var elementCount: Int { shape.reduce(1, *) }
    var isFloat: Bool { [.float16, .float32, .float64, .bfloat16].contains(dataType) }

    /// The values as Double.
    func doubles() -> [Double] {
        if let numbers { return numbers }
        if let tensor { return tensor.floats().map(Double.init) }
        return []
    }

    func floats() -> [Float] {
        if let tensor, numbers == nil { return tensor.floats() }
        return doubles().map { Float($0) }
    }

    /// A weight for an IR node: the kept storage (fp16 stays fp16, zero-copy; a constexpr op's
    /// compressed encoding stays compressed), else float32.
    /// - Parameter shape: the shape the node expects (same element count), default the value's.
    func constantTensor(shape target: [Int]? = nil) throws -> ConstantTensor {
        let s = target ?? shape
        guard s.reduce(1, *) == elementCount else {
            throw LayerImportFailure("a constant of shape \(shape) cannot be used with shape \(s)")
        }
        if let tensor, numbers == nil {
            if let t = tensor.reshaped(to: s) { return t }
            return ConstantTensor(shape: s, floats: tensor.floats())
        }
        guard strings == nil else { throw LayerImportFailure("a string constant cannot be a tensor") }
        return ConstantTensor(shape: s, floats: floats())
    }

    static func scalar(_ v: Double, _ t: Spec.MILSpec.DataType) -> MILConst {
        MILConst(shape: [], dataType: t, numbers: [v])
    }
}

/// What a MIL name is bound to while importing.
enum MILValue {
    /// A value known at import.
    case constant(MILConst)
    /// A run-time tensor: the IR tensor name.
    case tensor(String)
    /// A tuple of values (op outputs are bound one by one; tuples come from immediate values).
    case none
}

/// A MIL tensor type read from the program: shape (−1 for unknown dimensions) and element type.
struct MILTensorType {
    var shape: [Int]?
    var dataType: Spec.MILSpec.DataType
    var isList = false

    /// The IR element type that holds values of this MIL type (floats are float32 in the IR:
    /// fp16 programs run in fp32 unless `--precision fp16` rounds them).
    var irElementType: ElementType? { MILTypes.irElementType(dataType) }
}

enum MILTypes {
    static func irElementType(_ t: Spec.MILSpec.DataType) -> ElementType? {
        switch t {
        case .float16, .float32, .float64, .bfloat16: return .float32
        case .int8, .int16, .int32, .uint8, .uint16, .uint32, .int4, .uint1, .uint2, .uint3, .uint4, .uint6: return .int32
        case .int64, .uint64: return .int64
        case .bool: return .bool
        default: return nil
        }
    }

    /// MIL's dtype names as `cast` and the text format spell them.
    static func name(_ t: Spec.MILSpec.DataType) -> String {
        switch t {
        case .float16: return "fp16"
        case .float32: return "fp32"
        case .float64: return "fp64"
        case .bfloat16: return "bf16"
        case .int8: return "int8"
        case .int16: return "int16"
        case .int32: return "int32"
        case .int64: return "int64"
        case .uint8: return "uint8"
        case .uint16: return "uint16"
        case .uint32: return "uint32"
        case .uint64: return "uint64"
        case .int4: return "int4"
        case .uint1: return "uint1"
        case .uint2: return "uint2"
        case .uint3: return "uint3"
        case .uint4: return "uint4"
        case .uint6: return "uint6"
        case .bool: return "bool"
        case .string: return "string"
        case .float8e4m3fn: return "fp8e4m3fn"
        case .float8e5m2: return "fp8e5m2"
        default: return "dtype(\(t.rawValue))"
        }
    }

    static func dataType(named n: String) -> Spec.MILSpec.DataType? {
        let all: [Spec.MILSpec.DataType] = [.float16, .float32, .float64, .bfloat16, .int8, .int16, .int32, .int64, .uint8,
                                            .uint16, .uint32, .uint64, .int4, .uint1, .uint2, .uint3, .uint4, .uint6, .bool, .string]
        return all.first { name($0) == n }
    }

    /// Bits of one element (sub-byte types included); nil for strings and unknown types.
    static func bitWidth(_ t: Spec.MILSpec.DataType) -> Int? {
        switch t {
        case .bool, .int8, .uint8, .float8e4m3fn, .float8e5m2: return 8
        case .float16, .bfloat16, .int16, .uint16: return 16
        case .float32, .int32, .uint32: return 32
        case .float64, .int64, .uint64: return 64
        case .int4, .uint4: return 4
        case .uint1: return 1
        case .uint2: return 2
        case .uint3: return 3
        case .uint6: return 6
        default: return nil
        }
    }

    /// The tensor type of a MIL value type (nil for non-tensor types).
    static func tensorType(_ v: Spec.MILSpec.ValueType?) throws -> MILTensorType? {
        guard let v, let t = v.type else { return nil }
        switch t {
        case let .tensorType(tt):
            return MILTensorType(shape: try shape(tt), dataType: tt.dataType)
        case let .listType(l):
            guard let inner = try tensorType(l.type) else { return nil }
            return MILTensorType(shape: inner.shape, dataType: inner.dataType, isList: true)
        case let .stateType(s):
            return try tensorType(s.wrappedType)
        default:
            return nil
        }
    }

    /// The dimensions of a tensor type: −1 for unknown ones; nil when the rank is unknown.
    static func shape(_ t: Spec.MILSpec.TensorType) throws -> [Int]? {
        if t.rank < 0 { return nil }
        guard t.rank <= Int64(Node.maxRank) else { throw LayerImportFailure("has a tensor type of rank \(t.rank); mlconv supports rank ≤ \(Node.maxRank)") }
        guard t.dimensions.count == Int(t.rank) else {
            throw LayerImportFailure("has a tensor type of rank \(t.rank) with \(t.dimensions.count) dimensions")
        }
        return try t.dimensions.map { d -> Int in
            switch d.dimension {
            case let .constant(c)?: return try Checked.int(c.size, "a dimension", in: 0...Node.maxCountAttribute)
            default: return TensorType.unknown
            }
        }
    }
}

extension MILConst {
    /// Decodes a constant `Value` (immediate or blob file) of the given type.
    static func decode(_ v: Spec.MILSpec.Value, blobs: MILBlobResolver) throws -> MILConst {
        guard let tt = try MILTypes.tensorType(v.type) else {
            if case let .immediateValue(iv)? = v.value, case .tensor? = iv.value {
                throw LayerImportFailure("has a constant without a tensor type")
            }
            throw LayerImportFailure("has a constant that is not a tensor (tuple, list or dictionary values are not supported)")
        }
        guard let shape = tt.shape, shape.allSatisfy({ $0 >= 0 }) else {
            throw LayerImportFailure("has a constant whose type has unknown dimensions")
        }
        let count = try Checked.product(shape, "constant shape")
        switch v.value {
        case let .immediateValue(iv)?:
            guard case let .tensor(t)? = iv.value else {
                throw LayerImportFailure("has an immediate value that is not a tensor (tuple, list or dictionary)")
            }
            return try immediate(t, type: tt.dataType, shape: shape, count: count)
        case let .blobFileValue(b)?:
            return try blobs.constant(b, type: tt.dataType, shape: shape, count: count)
        case nil:
            throw LayerImportFailure("has a constant with no value")
        }
    }

    static func immediate(_ t: Spec.MILSpec.TensorValue, type: Spec.MILSpec.DataType, shape: [Int], count: Int) throws -> MILConst {
        func check(_ n: Int, _ what: String) throws {
            guard n == count else {
                throw LayerImportFailure("has an immediate \(MILTypes.name(type)) tensor of shape \(shape) (\(count) values) holding \(n) \(what)")
            }
        }
        switch t.value {
        case let .floats(f)?:
            try check(f.values.count, "floats")
            return MILConst(shape: shape, dataType: type, numbers: f.values.map(Double.init))
        case let .doubles(d)?:
            try check(d.values.count, "doubles")
            return MILConst(shape: shape, dataType: type, numbers: d.values)
        case let .ints(i)?:
            try check(i.values.count, "ints")
            return MILConst(shape: shape, dataType: type, numbers: i.values.map(Double.init))
        case let .longInts(i)?:
            try check(i.values.count, "int64s")
            return MILConst(shape: shape, dataType: type, numbers: i.values.map(Double.init))
        case let .bools(b)?:
            try check(b.values.count, "bools")
            return MILConst(shape: shape, dataType: type, numbers: b.values.map { $0 ? 1 : 0 })
        case let .strings(s)?:
            try check(s.values.count, "strings")
            return MILConst(shape: shape, dataType: type, strings: s.values)
        case let .bytes(b)?:
            return try fromBytes(b.values, type: type, shape: shape, count: count)
        case nil:
            try check(0, "values")
            return MILConst(shape: shape, dataType: type, numbers: [])
        }
    }

    /// Values stored as raw bytes (fp16, 8-bit and sub-byte types; immediate `bytes` or blobs).
    static func fromBytes(_ bytes: [UInt8], type: Spec.MILSpec.DataType, shape: [Int], count: Int) throws -> MILConst {
        try bytes.withUnsafeBytes { try fromBytes($0, type: type, shape: shape, count: count, storage: nil) }
    }

    static func fromBytes(_ buf: UnsafeRawBufferPointer, type: Spec.MILSpec.DataType, shape: [Int], count: Int,
                          storage: ByteStorage?) throws -> MILConst {
        guard let bits = MILTypes.bitWidth(type) else {
            throw LayerImportFailure("has a \(MILTypes.name(type)) tensor stored as bytes, which mlconv cannot read")
        }
        let need = (count * bits + 7) / 8
        guard buf.count >= need, bits < 8 || buf.count == need else {
            throw LayerImportFailure("has \(buf.count) bytes for \(count) \(MILTypes.name(type)) values (\(need) expected)")
        }
        switch type {
        case .float16:
            let st = storage ?? ByteStorage(copying: UnsafeRawBufferPointer(rebasing: buf[0..<need]))
            return MILConst(shape: shape, dataType: type, tensor: try ConstantTensor(shape: shape, encoding: .float16, storage: st))
        case .float32:
            let st = storage ?? ByteStorage(copying: UnsafeRawBufferPointer(rebasing: buf[0..<need]))
            return MILConst(shape: shape, dataType: type, tensor: try ConstantTensor(shape: shape, encoding: .float32, storage: st))
        case .int8: return MILConst(shape: shape, dataType: type, numbers: (0..<count).map { Double(Int8(bitPattern: buf[$0])) })
        case .uint8, .bool: return MILConst(shape: shape, dataType: type, numbers: (0..<count).map { Double(buf[$0]) })
        case .int16, .uint16:
            return MILConst(shape: shape, dataType: type, numbers: (0..<count).map { i in
                let u = buf.loadUnaligned(fromByteOffset: 2 * i, as: UInt16.self).littleEndian
                return type == .int16 ? Double(Int16(bitPattern: u)) : Double(u)
            })
        case .int32, .uint32:
            return MILConst(shape: shape, dataType: type, numbers: (0..<count).map { i in
                let u = buf.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self).littleEndian
                return type == .int32 ? Double(Int32(bitPattern: u)) : Double(u)
            })
        case .int4, .uint1, .uint2, .uint3, .uint4, .uint6:
            guard let codes = unpackLSBFirst(buf, bits: bits, count: count, signed: type == .int4) else {
                throw LayerImportFailure("has too few bytes for \(count) \(MILTypes.name(type)) values")
            }
            return MILConst(shape: shape, dataType: type, numbers: codes.map(Double.init))
        default:
            throw LayerImportFailure("has a \(MILTypes.name(type)) tensor stored as bytes, which mlconv cannot read")
        }
    }
}

/// Opens the weight files a program names (`@model_path/weights/weight.bin`), once each.
final class MILBlobResolver {
    /// The directory `@model_path` stands for (the package's `Data/com.apple.CoreML`), or nil for
    /// a bare `.mlmodel` (which cannot have blob values).
    let modelPath: String?
    let fileName: String
    private var files: [String: MILBlobFile] = [:]

    init(modelPath: String?, fileName: String) { self.modelPath = modelPath; self.fileName = fileName }

    func file(_ name: String) throws -> MILBlobFile {
        if let f = files[name] { return f }
        let prefix = "@model_path/"
        guard name.hasPrefix(prefix) else {
            throw LayerImportFailure("names the weight file '\(name)'; expected a path starting with @model_path/")
        }
        let rel = String(name.dropFirst(prefix.count))
        guard !rel.split(separator: "/").contains(".."), !rel.hasPrefix("/") else {
            throw LayerImportFailure("names the weight file '\(name)', which leaves the package")
        }
        guard let modelPath else {
            throw LayerImportFailure("reads the weight file '\(name)', but \(fileName) is a bare .mlmodel; open the .mlpackage instead")
        }
        let path = (modelPath as NSString).appendingPathComponent(rel)
        do {
            let f = try MILBlobFile(path: path)
            files[name] = f
            return f
        } catch let e as MILBlobError {
            throw LayerImportFailure("", cause: e)
        }
    }

    func constant(_ b: Spec.MILSpec.Value.BlobFileValue, type: Spec.MILSpec.DataType, shape: [Int], count: Int) throws -> MILConst {
        let f = try file(b.fileName)
        do {
            let blob = try f.blob(at: b.offset)
            guard blob.dataType.milDataType == type else {
                throw MILBlobError.typeMismatch(file: f.path, offset: b.offset, expected: MILTypes.name(type), found: "\(blob.dataType)")
            }
            let storage = blob.dataType == .float16 || blob.dataType == .float32 ? f.storage(of: blob) : nil
            if !blob.dataType.isSubByte && blob.elementCount != count {
                throw MILBlobError.typeMismatch(file: f.path, offset: b.offset, expected: "\(count) \(MILTypes.name(type)) values",
                                                found: "\(blob.elementCount)")
            }
            return try MILConst.fromBytes(blob.bytes, type: type, shape: shape, count: count, storage: storage)
        } catch let e as MILBlobError {
            throw LayerImportFailure("", cause: e)
        }
    }
}
