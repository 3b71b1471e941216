// Weight compression of ML programs (`mlconv quantize Model.mlpackage -o Small.mlpackage`), as
// coremltools.optimize.coreml does it: every `const` whose value lives in the weight file, has
// rank > 1 and more than `weightThreshold` elements (coremltools' default 2048) is replaced by a
// constexpr op that reconstructs it at load time, named `<const>_quantized` / `_palettized` /
// `_sparsified`, and its consumers are rewired to it. The constexpr ops of iOS16 (opset CoreML6)
// carry their data as attributes:
//
//   linear    constexpr_affine_dequantize(quantized_data int8, zero_point int8 [C], scale [C], axis 0)
//             symmetric per output channel: q ∈ −127…127, w ≈ (q − 0)·scale[c]
//   palettize constexpr_lut_to_dense(lut [2ⁿ], indices uint8 (n-bit codes packed LSB first), shape uint32)
//             one table per tensor, k-means (exact 1-D, `kmeansLUTQuantize`) or uniform
//   prune     constexpr_sparse_to_dense(nonzero_data, mask uint8 (1 bit per element, LSB first), shape uint32)
//             magnitude: the `sparsity` fraction of smallest |w| become 0
//
// A program whose opset is older than CoreML6 (iOS15) moves to CoreML6 / specificationVersion 7,
// as these ops need it. Programs of iOS18 (CoreML8), and requests that need iOS18 (int4,
// per-block scales, per-grouped-channel tables, 3-bit tables, n:m sparsity — the program then
// moves to CoreML8 / specificationVersion 9), get the iOS18 forms: MILWeightCompressor+iOS18.swift.
import CoreMLFormat
import Foundation
import MLGraph

/// What `MILWeightCompressor` does to each eligible weight.
public enum MILCompressionMode: Sendable, Equatable {
    /// Linear symmetric quantization per output channel (axis 0) to `bits` (8; 4 needs iOS18).
    /// `blockSize`: scales per block of input channels (iOS18).
    case linear(bits: Int, blockSize: Int?)
    /// A look-up table of 2^bits values: `kmeans` or `uniform`; `groupSize`: one table per group
    /// of output channels (iOS18).
    case palettize(bits: Int, kmeans: Bool, groupSize: Int?)
    /// Magnitude pruning to `sparsity` (0…1); `nOfM` = (n, m) keeps n of every m (iOS18).
    case prune(sparsity: Double, nOfM: (Int, Int)?)

    public static func == (a: Self, b: Self) -> Bool {
        switch (a, b) {
        case let (.linear(x, y), .linear(u, v)): return x == u && y == v
        case let (.palettize(x, y, z), .palettize(u, v, w)): return x == u && y == v && z == w
        case let (.prune(x, y), .prune(u, v)): return x == u && y?.0 == v?.0 && y?.1 == v?.1
        default: return false
        }
    }
}

/// A compression request that cannot be carried out.
public enum MILCompressionError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The model is not an ML program, or its program or weight file is malformed.
    case invalidModel(path: String, reason: String)
    /// The mode or option is not implemented (or needs a later deployment target).
    case unsupported(String)

    public var description: String {
        switch self {
        case let .invalidModel(path, reason): return "\(path): \(reason)"
        case let .unsupported(what): return "\(what) is not supported by mlconv's ML program compression yet"
        }
    }
}

/// One compressed weight: its const name, shape and the signal-to-quantization-noise ratio of
/// the reconstruction, 10·log10(Σw² / Σ(w − ŵ)²) dB (∞ when exact).
public struct MILCompressedWeight: Sendable, Equatable, Codable {
    public var name: String
    public var shape: [Int]
    public var sqnr: Double
}

public enum MILWeightCompressor {
    /// Compresses the ML program package at `input` and writes the result to `output`
    /// (an `.mlpackage`, atomically). Returns one entry per compressed weight.
    ///
    /// - Throws: `MILCompressionError` (not an ML program, malformed weights, unsupported mode),
    ///   `QuantizationError` from the quantizers, `MLProgramExportError.cannotWrite`.
    @discardableResult
    public static func compress(packageAt input: String, to output: String, mode: MILCompressionMode,
                                weightThreshold: Int = 2048) throws -> [MILCompressedWeight] {
        let pkg = try MLPackage.read(at: input)
        var weights: [UInt8] = []
        if let dir = pkg.weightsPath {
            let file = (dir as NSString).appendingPathComponent("weight.bin")
            if FileManager.default.fileExists(atPath: file) {
                guard let d = FileManager.default.contents(atPath: file) else {
                    throw MILCompressionError.invalidModel(path: file, reason: "cannot read the weight file")
                }
                weights = [UInt8](d)
            }
        }
        let (model, blobs, report) = try compress(model: pkg.model, weights: weights, mode: mode,
                                                   weightThreshold: weightThreshold, path: input)
        try MLPackageWriter.write(model: model, weights: blobs.count > 0 ? blobs : nil, to: output)
        return report
    }

    /// Compresses `model` (an ML program) whose weight file holds `weights`; returns the new
    /// model and weight file. See the file comment for the rules.
    public static func compress(model: Spec.Model, weights: [UInt8], mode: MILCompressionMode,
                                weightThreshold: Int = 2048, path: String = "<model>")
        throws -> (Spec.Model, MILBlobWriter, [MILCompressedWeight])
    {
        var needsIOS18 = false
        switch mode {
        case let .linear(bits, block):
            guard bits == 8 || bits == 4 else { throw MILCompressionError.unsupported("--linear with \(bits) bits (int8 or int4)") }
            if let b = block, b < 1 { throw MILCompressionError.unsupported("--block-size \(b) (expected ≥ 1)") }
            needsIOS18 = bits == 4 || block != nil
        case let .palettize(bits, _, group):
            if let g = group, g < 1 { throw MILCompressionError.unsupported("--group-size \(g) (expected ≥ 1)") }
            needsIOS18 = group != nil || bits == 3
            guard [1, 2, 3, 4, 6, 8].contains(bits) else {
                throw MILCompressionError.unsupported("--palettize \(bits) (tables have 1, 2, 4, 6 or 8 bits; 3 from iOS18)")
            }
        case let .prune(sparsity, nm):
            if let (n, m) = nm {
                guard n >= 0, m >= 1, n <= m else { throw MILCompressionError.unsupported("--prune \(n):\(m) (expected 0 ≤ n ≤ m, m ≥ 1)") }
                needsIOS18 = true
            } else {
                guard sparsity >= 0 && sparsity <= 1 else { throw MILCompressionError.unsupported("--sparsity \(sparsity) (expected 0…1)") }
            }
        }
        guard var program = try model.mlProgram(file: path) else {
            throw MILCompressionError.invalidModel(path: path, reason: "not an ML program (mlProgram model); compress .mlmodel neural networks with the .mlmodel route")
        }
        guard var function = program.functions["main"], var block = function.blockSpecializations[function.opset] else {
            throw MILCompressionError.invalidModel(path: path, reason: "no function 'main' with a block for its opset")
        }
        let opsets = ["CoreML5", "CoreML6", "CoreML7", "CoreML8"]
        guard let level = opsets.firstIndex(of: function.opset) else {
            throw MILCompressionError.invalidModel(path: path, reason: "unknown opset '\(function.opset)' (expected CoreML5…CoreML8)")
        }
        var newModel = model
        let minimum = needsIOS18 ? 3 : 1
        if level < minimum {
            function.blockSpecializations[function.opset] = nil
            function.opset = opsets[minimum]
            newModel.specificationVersion = max(newModel.specificationVersion, Int32(6 + minimum))
        }
        let ios18 = max(level, minimum) >= 3

        let reader = BlobReader(bytes: weights, path: path)
        var blobs = MILBlobWriter()
        var ops: [Spec.MILSpec.Operation] = []
        var rename: [String: String] = [:]
        var report: [MILCompressedWeight] = []
        for var op in block.operations {
            guard op.type == "const", var val = op.attributes["val"], case let .blobFileValue(ref)? = val.value,
                  let out = op.outputs.first, case let .tensorType(tt)? = out.type?.type else {
                ops.append(op); continue
            }
            let shape = tt.dimensions.map { d -> Int in
                if case let .constant(c)? = d.dimension { return Int(clamping: c.size) }
                return -1
            }
            let blob = try reader.blob(at: ref.offset)
            let count = shape.reduce(1) { $0.multipliedReportingOverflow(by: max($1, 0)).partialValue }
            let isFloat = blob.type == .float32 || blob.type == .float16
            if isFloat, shape.count > 1, !shape.contains(-1), count > weightThreshold, count >= 10,
               let values = blob.floats(count: count) {
                let fp16 = blob.type == .float16
                let made = ios18 ? try compressedIOS18(name: out.name, values: values, shape: shape, fp16: fp16, mode: mode, blobs: &blobs)
                    : try compressed(name: out.name, values: values, shape: shape, fp16: fp16, mode: mode, blobs: &blobs)
                guard let (newOp, newName, recon) = made else {
                    // Not compressible in this mode (coremltools skips it too): kept as it is.
                    let off = try blobs.append(encoded: blob.data, type: blob.type, elementCount: blob.elementCount)
                    val.value = .blobFileValue(.init(fileName: ref.fileName, offset: off))
                    op.attributes["val"] = val
                    ops.append(op)
                    continue
                }
                ops.append(newOp)
                rename[out.name] = newName
                report.append(MILCompressedWeight(name: out.name, shape: shape, sqnr: sqnr(values, recon)))
                continue
            }
            // Keep the blob as it is, at its new offset.
            let off = try blobs.append(encoded: blob.data, type: blob.type, elementCount: blob.elementCount)
            val.value = .blobFileValue(.init(fileName: ref.fileName, offset: off))
            op.attributes["val"] = val
            ops.append(op)
        }
        for i in ops.indices {
            for (k, arg) in ops[i].inputs {
                var a = arg
                a.arguments = a.arguments.map { b in
                    if case let .name(n)? = b.binding, let r = rename[n] { return .init(binding: .name(r)) }
                    return b
                }
                ops[i].inputs[k] = a
            }
        }
        block.operations = ops
        block.outputs = block.outputs.map { rename[$0] ?? $0 }
        function.blockSpecializations[function.opset] = block
        program.functions["main"] = function
        try newModel.setMLProgram(program)
        return (newModel, blobs, report)
    }

    // MARK: Modes

    /// A float constant value of shape `s`, typed fp16 or fp32: in the weight file from 10
    /// elements on (as coremltools), else immediate (fp16 as little-endian bytes).
    static func floatConstant(_ v: [Float], _ s: [Int], fp16: Bool, blobs: inout MILBlobWriter) -> Spec.MILSpec.Value {
        let floatType: Spec.MILSpec.DataType = fp16 ? .float16 : .float32
        if v.count >= 10 {
            let off = fp16 ? blobs.append(float16Bits: v.map { Float16($0).bitPattern }) : blobs.append(float32: v)
            return blobValue(floatType, s, off)
        }
        if fp16 {
            return immediate(floatType, s, .bytes(.init(values: v.flatMap { f -> [UInt8] in let b = Float16(f).bitPattern; return [UInt8(b & 0xff), UInt8(b >> 8)] })))
        }
        return immediate(floatType, s, .floats(.init(values: v)))
    }

    static func compressed(name: String, values: [Float], shape: [Int], fp16: Bool, mode: MILCompressionMode,
                           blobs: inout MILBlobWriter) throws -> (Spec.MILSpec.Operation, String, [Float])? {
        let floatType: Spec.MILSpec.DataType = fp16 ? .float16 : .float32
        func floatValue(_ v: [Float], _ s: [Int]) -> Spec.MILSpec.Value { floatConstant(v, s, fp16: fp16, blobs: &blobs) }
        func bytesValue(_ type: Spec.MILSpec.DataType, _ v: [UInt8], _ s: [Int], blobType: MILBlobWriter.DataType) throws -> Spec.MILSpec.Value {
            if v.count >= 10 { return blobValue(type, s, try blobs.append(encoded: v, type: blobType, elementCount: v.count)) }
            return immediate(type, s, .bytes(.init(values: v)))
        }
        let shapeValue = immediate(.uint32, [shape.count], .bytes(.init(values: shape.flatMap { d -> [UInt8] in
            let u = UInt32(clamping: d); return [UInt8(u & 0xff), UInt8((u >> 8) & 0xff), UInt8((u >> 16) & 0xff), UInt8(u >> 24)] })))
        // Rounded through the stored precision, as the runtime reconstructs it.
        func stored(_ v: Float) -> Float { fp16 ? Float(Float16(v)) : v }

        switch mode {
        case .linear:
            let q = try linearSymmetricQuantize(values, shape: shape, axis: 0)
            let data = q.codes.map { Int8(Int($0) - 128) }
            let c = shape[0]
            let inner = values.count / max(c, 1)
            let scale = q.scale.count == c ? q.scale : [Float](repeating: q.scale.first ?? 0, count: c)
            var recon = [Float](repeating: 0, count: values.count)
            for i in values.indices { recon[i] = Float(data[i]) * stored(scale[i / max(inner, 1)]) }
            let newName = name + "_quantized"
            let op = Spec.MILSpec.Operation(type: "constexpr_affine_dequantize",
                outputs: [.init(name: newName, type: tensorType(floatType, shape))],
                attributes: ["name": stringValue(newName),
                             "quantized_data": try bytesValue(.int8, data.map { UInt8(bitPattern: $0) }, shape, blobType: .int8),
                             "zero_point": try bytesValue(.int8, [UInt8](repeating: 0, count: c), [c], blobType: .int8),
                             "scale": floatValue(scale, [c]),
                             "axis": immediate(.int32, [], .ints(.init(values: [0])))])
            return (op, newName, recon)

        case let .palettize(bits, kmeans, _):
            let (table, codes) = try palette(values, bits: bits, kmeans: kmeans)
            let packed = packLSBFirst(codes, bits: bits)
            let recon = codes.map { stored(table[$0]) }
            let newName = name + "_palettized"
            let op = Spec.MILSpec.Operation(type: "constexpr_lut_to_dense",
                outputs: [.init(name: newName, type: tensorType(floatType, shape))],
                attributes: ["name": stringValue(newName),
                             "lut": floatValue(table, [table.count]),
                             "indices": try bytesValue(.uint8, packed, [packed.count], blobType: .uint8),
                             "shape": shapeValue])
            return (op, newName, recon)

        case let .prune(sparsity, _):
            let k = Int((sparsity * Double(values.count)).rounded(.down))
            var keep = [Bool](repeating: true, count: values.count)
            if k > 0 {
                let order = values.indices.sorted { abs(values[$0]) < abs(values[$1]) || (abs(values[$0]) == abs(values[$1]) && $0 < $1) }
                for i in order.prefix(k) { keep[i] = false }
            }
            for i in values.indices where values[i] == 0 { keep[i] = false }
            let nonzero = values.indices.filter { keep[$0] }.map { values[$0] }
            let mask = packLSBFirst(keep.map { $0 ? 1 : 0 }, bits: 1)
            let recon = values.indices.map { keep[$0] ? stored(values[$0]) : 0 }
            let newName = name + "_sparsified"
            let op = Spec.MILSpec.Operation(type: "constexpr_sparse_to_dense",
                outputs: [.init(name: newName, type: tensorType(floatType, shape))],
                attributes: ["name": stringValue(newName),
                             "nonzero_data": floatValue(nonzero, [nonzero.count]),
                             "mask": try bytesValue(.uint8, mask, [mask.count], blobType: .uint8),
                             "shape": shapeValue])
            return (op, newName, recon)
        }
    }

    /// n-bit codes packed from the least significant bit of each byte up (coremltools
    /// `pack_elements_into_bits`), the last byte zero-padded.
    static func packLSBFirst(_ codes: [Int], bits: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: (codes.count * bits + 7) / 8)
        for (i, c) in codes.enumerated() {
            for j in 0..<bits where (c >> j) & 1 == 1 {
                let bit = i * bits + j
                out[bit / 8] |= UInt8(1 << (bit % 8))
            }
        }
        return out
    }

    /// 10·log10(Σw² / Σ(w − ŵ)²) in dB; +∞ when the reconstruction is exact.
    public static func sqnr(_ w: [Float], _ r: [Float]) -> Double {
        var s = 0.0, n = 0.0
        for (a, b) in zip(w, r) { s += Double(a) * Double(a); n += (Double(a) - Double(b)) * (Double(a) - Double(b)) }
        return n == 0 ? .infinity : 10 * log10(s / n)
    }

    // MARK: MIL values

    static func tensorType(_ t: Spec.MILSpec.DataType, _ shape: [Int]) -> Spec.MILSpec.ValueType {
        .init(type: .tensorType(.init(dataType: t, rank: Int64(shape.count),
                                      dimensions: shape.map { .init(dimension: .constant(.init(size: UInt64(max($0, 0))))) })))
    }

    static func immediate(_ t: Spec.MILSpec.DataType, _ shape: [Int], _ v: Spec.MILSpec.TensorValue.ValueOneof) -> Spec.MILSpec.Value {
        .init(type: tensorType(t, shape), value: .immediateValue(.init(value: .tensor(.init(value: v)))))
    }

    static func blobValue(_ t: Spec.MILSpec.DataType, _ shape: [Int], _ offset: UInt64) -> Spec.MILSpec.Value {
        .init(type: tensorType(t, shape), value: .blobFileValue(.init(fileName: MLPackageWriter.weightFileReference, offset: offset)))
    }

    static func stringValue(_ s: String) -> Spec.MILSpec.Value { immediate(.string, [], .strings(.init(values: [s]))) }
}

/// Reads blobs of a MIL weight file by metadata offset, with every field checked against the
/// file size (the file is untrusted).
struct BlobReader {
    let bytes: [UInt8]
    let path: String

    struct Blob {
        var type: MILBlobWriter.DataType
        var data: [UInt8]
        var paddingBits: Int
        var elementCount: Int { (data.count * 8 - paddingBits) / max(type.bitWidth, 1) }

        func floats(count: Int) -> [Float]? {
            switch type {
            case .float32 where data.count == count * 4:
                return (0..<count).map { i in Float(bitPattern: UInt32(data[4 * i]) | UInt32(data[4 * i + 1]) << 8 | UInt32(data[4 * i + 2]) << 16 | UInt32(data[4 * i + 3]) << 24) }
            case .float16 where data.count == count * 2:
                return (0..<count).map { i in Float(Float16(bitPattern: UInt16(data[2 * i]) | UInt16(data[2 * i + 1]) << 8)) }
            default: return nil
            }
        }
    }

    func u64(_ at: Int) -> UInt64 { (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) } }
    func u32(_ at: Int) -> UInt32 { (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[at + $1]) << (8 * UInt32($1)) } }

    func blob(at offset: UInt64) throws -> Blob {
        func bad(_ why: String) -> MILCompressionError { .invalidModel(path: path, reason: "weight blob at offset \(offset): \(why)") }
        guard let m = Int(exactly: offset), m >= 64, m <= bytes.count - 64 else { throw bad("metadata outside the \(bytes.count)-byte weight file") }
        guard u32(m) == MILBlobWriter.sentinel else { throw bad("no 0xDEADBEEF sentinel") }
        guard let type = MILBlobWriter.DataType(rawValue: u32(m + 4)) else { throw bad("unknown data type \(u32(m + 4))") }
        guard let size = Int(exactly: u64(m + 8)), let start = Int(exactly: u64(m + 16)), let pad = Int(exactly: u64(m + 24)),
              start >= 0, size >= 0, start <= bytes.count, size <= bytes.count - start, pad < 8 else {
            throw bad("data size/offset outside the \(bytes.count)-byte file")
        }
        return Blob(type: type, data: Array(bytes[start ..< start + size]), paddingBits: pad)
    }
}
