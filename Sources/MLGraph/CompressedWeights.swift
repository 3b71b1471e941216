// Compressed weight encodings of ML programs (bundle format 2.1, docs/BUNDLE_FORMAT.md §5.3, §6):
// the forms of MIL's constexpr ops (coremltools ops/defs/iOS16/constexpr_ops.py and
// iOS18/compression.py) kept compressed in a bundle's weight section and expanded to float32 once,
// when a model is loaded (`ConstantTensor.floats()`, which the kernels call while they build
// their own copies of the weights).
//
//   blockwise   value = (code − zeroPoint[block]) · scale[block]   constexpr_affine_dequantize,
//                                                                  constexpr_blockwise_shift_scale
//   palettized  value = palette[block][code]                       constexpr_lut_to_dense
//   sparse      a bit mask of the non-zero positions + the non-zero constexpr_sparse_to_dense,
//               values in an inner encoding (float32, float16,     constexpr_lut_to_sparse,
//               blockwise, palettized)                             constexpr_sparse_blockwise_shift_scale
//
// A block of a tensor of shape [d0, d1, …] split into `blocks` [b0, b1, …] (each b dividing its d)
// is the set of elements whose coordinate along every axis k lies in the same run of d_k / b_k
// values; blocks are numbered row-major over the grid. Per-tensor parameters are blocks [1, 1, …],
// per-output-channel ones [C, 1, …].
//
// Byte layouts (all parameters IEEE binary32 little-endian, after the codes, 4-byte aligned):
//   blockwise   codes (bits each, MSB-first packed, ⌈n·bits/8⌉ bytes, at least 1), zero padding to a
//               multiple of 4, scale[B], then zeroPoint[B] when `hasZeroPoint`
//   palettized  codes as above, padding, palettes[B][2^bits]
//   sparse      mask (1 bit per element, MSB-first, ⌈n/8⌉ bytes, at least 1; 1 = non-zero),
//               zero padding to a multiple of 4, then the `nonzeroCount` values in `values`'s layout
//               (a blockwise / palettized inner encoding's blocks index the dense shape)
import Foundation

/// Blockwise affine quantization (MIL `constexpr_blockwise_shift_scale`, and
/// `constexpr_affine_dequantize` as the case of per-channel or per-tensor blocks):
/// value = (code − zeroPoint[b]) · scale[b], b the element's block.
public struct BlockwiseQuantization: Codable, Hashable, Sendable {
    /// Bits per code, 1…8.
    public var bits: Int
    /// Whether codes are two's-complement signed (MIL int8 / int4) rather than unsigned (uint8 / uint4).
    public var signed: Bool
    /// Number of blocks along each axis of the constant's shape (same rank; each divides its dimension).
    public var blocks: [Int]
    /// Whether a zero point per block follows the scales (else the zero point is 0).
    public var hasZeroPoint: Bool

    public init(bits: Int, signed: Bool, blocks: [Int], hasZeroPoint: Bool) {
        self.bits = bits; self.signed = signed; self.blocks = blocks; self.hasZeroPoint = hasZeroPoint
    }
}

/// Palettization with one palette per block (MIL `constexpr_lut_to_dense`; iOS18's per-grouped-
/// channel palettes are blocks along the grouped axis): value = palette[b][code].
public struct PalettizedQuantization: Codable, Hashable, Sendable {
    /// Bits per code, 1…8; each palette has 2^bits float32 entries (unused entries are 0).
    public var bits: Int
    /// Number of palettes along each axis of the constant's shape (same rank; each divides its dimension).
    public var blocks: [Int]

    public init(bits: Int, blocks: [Int]) { self.bits = bits; self.blocks = blocks }
}

/// Sparse storage (MIL `constexpr_sparse_to_dense`, `constexpr_lut_to_sparse`,
/// `constexpr_sparse_blockwise_shift_scale`): a bit mask of the non-zero positions and the
/// non-zero values, row-major, in `values` (float32, float16, blockwise or palettized).
public struct SparseEncoding: Codable, Hashable, Sendable {
    /// Number of set mask bits (and of stored values).
    public var nonzeroCount: Int
    /// Encoding of the stored values; a blockwise / palettized one's blocks index the dense shape.
    public var values: WeightEncoding

    public init(nonzeroCount: Int, values: WeightEncoding) { self.nonzeroCount = nonzeroCount; self.values = values }
}

/// Round `n` up to a multiple of 4.
@inline(__always) private func align4(_ n: Int) -> Int { (n + 3) & ~3 }

extension WeightEncoding {
    /// Whether this is one of the compressed encodings added in bundle format 2.1.
    public var isFormat21Encoding: Bool {
        switch self {
        case .blockwise, .palettized, .sparse: return true
        case .float32, .float16, .linear, .lookupTable: return false
        }
    }

    /// Bytes of the packed codes of `count` elements (at least 1).
    static func codeBytes(_ count: Int, bits: Int) -> Int { Swift.max(1, (count * bits + 7) / 8) }

    /// Product of `blocks` (the number of blocks, hence of parameter sets).
    static func blockCount(_ blocks: [Int]) -> Int { blocks.reduce(1, *) }

    /// Byte count of the 2.1 encodings (the caller has validated the encoding against the shape).
    func compressedByteCount(forElements count: Int) -> Int {
        switch self {
        case let .blockwise(q):
            let b = Self.blockCount(q.blocks)
            return align4(Self.codeBytes(count, bits: q.bits)) + 4 * b * (q.hasZeroPoint ? 2 : 1)
        case let .palettized(q):
            return align4(Self.codeBytes(count, bits: q.bits)) + 4 * Self.blockCount(q.blocks) << q.bits
        case let .sparse(s):
            return align4(Self.codeBytes(count, bits: 1)) + s.values.byteCount(forElements: s.nonzeroCount)
        default:
            return byteCount(forElements: count)
        }
    }

    /// Checks the fields of a 2.1 encoding against the constant's shape: bits 1…8, a block grid of
    /// the shape's rank whose every count divides its dimension, a sparse count within the element
    /// count and an inner encoding of an allowed kind. Other encodings pass unchanged.
    /// - Throws: `GraphError.invalidConstant` naming the field, the expected and the found value.
    public func validate(shape: [Int]) throws {
        func fail(_ m: String) -> GraphError { .invalidConstant("\(description) encoding of shape \(formatShape(shape)): \(m)") }
        var n = 1
        for d in shape {
            guard d >= 0 else { throw fail("negative dimension \(d)") }
            let (p, o) = n.multipliedReportingOverflow(by: d)
            guard !o, p <= 1 << 40 else { throw fail("more than 2^40 elements") }
            n = p
        }
        func checkBlocks(_ blocks: [Int]) throws {
            guard blocks.count == shape.count else {
                throw fail("a block grid \(formatShape(blocks)) of rank \(blocks.count) for a shape of rank \(shape.count); the ranks must match")
            }
            for (d, b) in zip(shape, blocks) {
                guard b >= 1, b <= Swift.max(d, 1), d % b == 0 else {
                    throw fail("a block grid \(formatShape(blocks)) that does not divide the shape (each count must be ≥ 1 and divide its dimension)")
                }
            }
        }
        switch self {
        case .float32, .float16, .linear, .lookupTable:
            return
        case let .blockwise(q):
            guard (1...8).contains(q.bits) else { throw fail("\(q.bits) bits per code; expected 1…8") }
            try checkBlocks(q.blocks)
        case let .palettized(q):
            guard (1...8).contains(q.bits) else { throw fail("\(q.bits) bits per code; expected 1…8") }
            try checkBlocks(q.blocks)
        case let .sparse(s):
            guard s.nonzeroCount >= 0, s.nonzeroCount <= n else {
                throw fail("\(s.nonzeroCount) non-zero values for \(n) elements; expected 0…\(n)")
            }
            switch s.values {
            case .float32, .float16, .blockwise, .palettized: try s.values.validate(shape: shape)
            case .linear, .lookupTable, .sparse:
                throw fail("non-zero values in the \(s.values.description) encoding; expected float32, float16, blockwise or palettized")
            }
        }
    }

    /// Expands the values of a 2.1 encoding stored in `bytes` to float32. `positions` are the
    /// dense row-major indices of the stored elements (nil: all of `shape`, in order).
    /// The caller has validated the encoding and the byte count.
    func expandCompressed(_ bytes: UnsafeRawBufferPointer, shape: [Int], positions: [Int]?) -> [Float] {
        let n = shape.reduce(1, *)
        let count = positions?.count ?? n
        func param(_ offset: Int, _ i: Int) -> Float {
            Float(bitPattern: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 4 * i, as: UInt32.self)))
        }
        switch self {
        case .float32:
            return (0..<count).map { param(0, $0) }
        case .float16:
            return (0..<count).map { Float(Float16(bitPattern: UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: 2 * $0, as: UInt16.self)))) }
        case let .blockwise(q):
            let codes = unpackMSBFirst(bytes, bits: q.bits, count: count)
            let block = blockIndices(shape: shape, blocks: q.blocks, positions: positions)
            let scaleAt = align4(Self.codeBytes(count, bits: q.bits)), nb = Self.blockCount(q.blocks)
            let zeroAt = scaleAt + 4 * nb
            let signBit = 1 << (q.bits - 1)
            return (0..<count).map { i in
                var c = Int(codes[i])
                if q.signed, c & signBit != 0 { c -= 1 << q.bits }
                let b = block[i]
                let z = q.hasZeroPoint ? Double(param(zeroAt, b)) : 0
                return Float(Double(param(scaleAt, b)) * (Double(c) - z))
            }
        case let .palettized(q):
            let codes = unpackMSBFirst(bytes, bits: q.bits, count: count)
            let block = blockIndices(shape: shape, blocks: q.blocks, positions: positions)
            let tableAt = align4(Self.codeBytes(count, bits: q.bits))
            return (0..<count).map { i in param(tableAt, block[i] << q.bits + Int(codes[i])) }
        case let .sparse(s):
            let maskBits = unpackMSBFirst(bytes, bits: 1, count: n)
            var nz: [Int] = []
            nz.reserveCapacity(s.nonzeroCount)
            for i in 0..<n where maskBits[i] != 0 { nz.append(i) }
            let inner = UnsafeRawBufferPointer(rebasing: bytes[align4(Self.codeBytes(n, bits: 1))...])
            let values = s.values.expandCompressed(inner, shape: shape, positions: nz)
            var out = [Float](repeating: 0, count: n)
            for (k, p) in nz.enumerated() where k < values.count { out[p] = values[k] }
            return out
        case .linear, .lookupTable:
            return []  // not reached: ConstantTensor.floats() expands these itself
        }
    }
}

/// The row-major block number of each element (of all of `shape` in order, or of `positions`).
func blockIndices(shape: [Int], blocks: [Int], positions: [Int]?) -> [Int] {
    let rank = shape.count
    let run = (0..<rank).map { shape[$0] / Swift.max(blocks[$0], 1) }
    func block(ofCoords c: [Int]) -> Int {
        var f = 0
        for d in 0..<rank { f = f * blocks[d] + c[d] / Swift.max(run[d], 1) }
        return f
    }
    if let positions {
        return positions.map { p in
            var c = [Int](repeating: 0, count: rank), r = p
            for d in stride(from: rank - 1, through: 0, by: -1) where shape[d] > 0 { c[d] = r % shape[d]; r /= shape[d] }
            return block(ofCoords: c)
        }
    }
    let n = shape.reduce(1, *)
    var out = [Int](repeating: 0, count: n)
    guard n > 0 else { return out }
    var c = [Int](repeating: 0, count: rank)
    for i in 0..<n {
        out[i] = block(ofCoords: c)
        advanceRowMajor(&c, shape: shape)
    }
    return out
}

extension ConstantTensor {
    /// Builds a compressed constant from its parts (codes as unsigned `bits`-bit values, signed
    /// ones in two's complement; parameters as float32) in the layout of `encoding`.
    /// - Throws: `GraphError.invalidConstant` when the parts do not fit the encoding and shape.
    public static func compressed(shape: [Int], encoding: WeightEncoding, codes: [UInt8], parameters: [Float],
                                  mask: [Bool]? = nil) throws -> ConstantTensor {
        try encoding.validate(shape: shape)
        var bytes: [UInt8] = []
        if let mask {
            guard case let .sparse(s) = encoding, mask.count == shape.reduce(1, *) else {
                throw GraphError.invalidConstant("a sparse mask of \(mask.count) bits for shape \(formatShape(shape)) in \(encoding)")
            }
            bytes = packMSBFirst(mask.map { $0 ? 1 : 0 }, bits: 1)
            bytes += [UInt8](repeating: 0, count: align4(bytes.count) - bytes.count)
            bytes += try Self.packValues(s.values, codes: codes, parameters: parameters, count: s.nonzeroCount)
        } else {
            bytes = try Self.packValues(encoding, codes: codes, parameters: parameters, count: shape.reduce(1, *))
        }
        return try ConstantTensor(shape: shape, encoding: encoding, storage: .copying(bytes))
    }

    private static func packValues(_ e: WeightEncoding, codes: [UInt8], parameters: [Float], count: Int) throws -> [UInt8] {
        func floatBytes(_ v: [Float]) -> [UInt8] { v.withUnsafeBytes { Array($0) } }
        switch e {
        case .float32:
            guard parameters.count == count else { throw GraphError.invalidConstant("\(parameters.count) float32 values for \(count) elements") }
            return floatBytes(parameters)
        case .float16:
            guard parameters.count == count else { throw GraphError.invalidConstant("\(parameters.count) float16 values for \(count) elements") }
            return parameters.map { Float16($0).bitPattern.littleEndian }.withUnsafeBytes { Array($0) }
        case let .blockwise(q):
            let need = WeightEncoding.blockCount(q.blocks) * (q.hasZeroPoint ? 2 : 1)
            guard codes.count == count, parameters.count == need else {
                throw GraphError.invalidConstant("blockwise values: \(codes.count) codes and \(parameters.count) parameters for \(count) elements (expected \(count) and \(need))")
            }
            let mask = UInt8(truncatingIfNeeded: (1 << q.bits) - 1)
            var out = packMSBFirst(codes.map { $0 & mask }, bits: q.bits)
            out += [UInt8](repeating: 0, count: align4(out.count) - out.count)
            return out + floatBytes(parameters)
        case let .palettized(q):
            let need = WeightEncoding.blockCount(q.blocks) << q.bits
            guard codes.count == count, parameters.count == need, codes.allSatisfy({ Int($0) < 1 << q.bits }) else {
                throw GraphError.invalidConstant("palettized values: \(codes.count) codes and \(parameters.count) palette entries for \(count) elements (expected \(count) codes below \(1 << q.bits) and \(need) entries)")
            }
            var out = packMSBFirst(codes, bits: q.bits)
            out += [UInt8](repeating: 0, count: align4(out.count) - out.count)
            return out + floatBytes(parameters)
        case .linear, .lookupTable, .sparse:
            throw GraphError.invalidConstant("\(e) cannot hold the values of a sparse constant")
        }
    }

    /// Checks a sparse constant's mask: its set bits must number `nonzeroCount`.
    func checkSparseMask(_ s: SparseEncoding) throws {
        let n = elementCount
        let bits = unpackMSBFirst(storage.buffer, bits: 1, count: n)
        var set = 0
        for b in bits where b != 0 { set += 1 }
        guard set == s.nonzeroCount else {
            throw GraphError.invalidConstant("sparse constant of shape \(formatShape(shape)): the mask has \(set) set bits, the encoding says \(s.nonzeroCount) non-zero values")
        }
    }
}

extension ConstantTensor {
    /// The same bytes under another shape of the same element count. A blockwise / palettized /
    /// sparse constant's block grid follows when the new shape only adds or removes dimensions of
    /// size 1; otherwise (and for an element-count mismatch) nil — the caller then expands the
    /// values (`floats()`). Other encodings are re-wrapped unchanged.
    public func reshaped(to newShape: [Int]) -> ConstantTensor? {
        if newShape == shape { return self }
        guard newShape.reduce(1, *) == elementCount else { return nil }
        func regrid(_ blocks: [Int]) -> [Int]? {
            let kept = zip(shape, blocks).filter { $0.0 != 1 }
            guard kept.map(\.0) == newShape.filter({ $0 != 1 }) else { return nil }
            var it = kept.map(\.1).makeIterator()
            return newShape.map { $0 == 1 ? 1 : (it.next() ?? 1) }
        }
        func regridded(_ e: WeightEncoding) -> WeightEncoding? {
            switch e {
            case .float32, .float16, .linear, .lookupTable: return e
            case var .blockwise(q):
                guard let b = regrid(q.blocks) else { return nil }
                q.blocks = b
                return .blockwise(q)
            case var .palettized(q):
                guard let b = regrid(q.blocks) else { return nil }
                q.blocks = b
                return .palettized(q)
            case var .sparse(s):
                guard let inner = regridded(s.values) else { return nil }
                s.values = inner
                return .sparse(s)
            }
        }
        guard let e = regridded(encoding) else { return nil }
        return try? ConstantTensor(shape: newShape, encoding: e, storage: storage)
    }
}
