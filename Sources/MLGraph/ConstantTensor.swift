import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Read-only bytes that a `ConstantTensor` points into: either memory this process allocated
/// (64-byte aligned), or a region of a memory-mapped `.mlbundle` kept alive by `owner`.
public final class ByteStorage: @unchecked Sendable {
    /// First byte. Valid for `count` bytes while this object is alive.
    public let baseAddress: UnsafeRawPointer
    public let count: Int
    /// Keeps the underlying memory (an mmap region, or an allocation) alive.
    private let owner: AnyObject?
    private let ownsAllocation: Bool
    /// Whether the bytes lie in a read-only private mapping of a file (`mmap` PROT_READ,
    /// MAP_PRIVATE), whose pages the kernel can always read again from the file.
    public let isReadOnlyFileMapping: Bool

    /// Wraps memory owned by `owner` (e.g. a mapped file) without copying. Pass
    /// `readOnlyFileMapping: true` only for a PROT_READ, MAP_PRIVATE mapping of a file that is not
    /// modified while mapped: `releaseResidentPages()` then drops its pages from memory.
    public init(borrowing baseAddress: UnsafeRawPointer, count: Int, owner: AnyObject, readOnlyFileMapping: Bool = false) {
        self.baseAddress = baseAddress
        self.count = count
        self.owner = owner
        self.ownsAllocation = false
        self.isReadOnlyFileMapping = readOnlyFileMapping
    }

    /// Copies `bytes` into a fresh 64-byte-aligned allocation.
    public init(copying bytes: UnsafeRawBufferPointer) {
        let p = UnsafeMutableRawPointer.allocate(byteCount: Swift.max(bytes.count, 1), alignment: 64)
        if let src = bytes.baseAddress, bytes.count > 0 { p.copyMemory(from: src, byteCount: bytes.count) }
        self.baseAddress = UnsafeRawPointer(p)
        self.count = bytes.count
        self.owner = nil
        self.ownsAllocation = true
        self.isReadOnlyFileMapping = false
    }

    /// Copies `bytes` (the pointer is only used inside `withUnsafeBytes`).
    public static func copying(_ bytes: [UInt8]) -> ByteStorage {
        bytes.withUnsafeBytes { ByteStorage(copying: $0) }
    }

    /// Copies the float32 values' bytes (little-endian on every supported host).
    public static func copying(floats: [Float]) -> ByteStorage {
        floats.withUnsafeBytes { ByteStorage(copying: $0) }
    }

    deinit {
        if ownsAllocation { UnsafeMutableRawPointer(mutating: baseAddress).deallocate() }
    }

    public var buffer: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: baseAddress, count: count) }

    // MARK: peak memory (issue 12)
    /// Drops the resident pages that lie wholly inside these bytes from the process
    /// (`madvise(MADV_DONTNEED)`), when they are a read-only file mapping; a later read faults
    /// them in again from the file (the values do not change). Called once a weight has been
    /// repacked into a kernel's own layout, so that the mapped copy and the packed copy are not
    /// both resident (the peak RSS of loading a model). Does nothing for allocated bytes.
    public func releaseResidentPages() {
        guard isReadOnlyFileMapping, count > 0 else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        guard page > 0 else { return }
        let start = (Int(bitPattern: baseAddress) + page - 1) / page * page
        let end = (Int(bitPattern: baseAddress) + count) / page * page
        guard end > start, let p = UnsafeMutableRawPointer(bitPattern: start) else { return }
        _ = madvise(p, end - start, MADV_DONTNEED)
    }

    // MARK: graph verifier (issue 13)
    /// Whether the bytes belong to `owner` (a mapped file) rather than to an allocation of this
    /// object; the verifier counts only allocated weight bytes against the memory limit.
    public var isBorrowed: Bool { !ownsAllocation }
}

/// Linear quantization (Core ML `QuantizationParams.linearQuantization`): w = q·scale[c] + bias[c],
/// with c the index along `axis` of the weight's canonical shape (one scale/bias per output
/// channel), or a single scale/bias for the whole tensor when the arrays have one element.
public struct LinearQuantization: Codable, Hashable, Sendable {
    /// Bits per value, 1…8. Values are packed MSB-first (coreml-format-facts §2.8).
    public var bits: Int
    /// Axis of the canonical weight shape that `scale`/`bias` index.
    public var axis: Int
    public var scale: [Float]
    public var bias: [Float]

    public init(bits: Int, axis: Int, scale: [Float], bias: [Float]) {
        self.bits = bits; self.axis = axis; self.scale = scale; self.bias = bias
    }
}

/// Look-up-table quantization (Core ML `lookupTableQuantization`): w = table[q], 2^bits entries.
public struct LookupTableQuantization: Codable, Hashable, Sendable {
    public var bits: Int
    public var table: [Float]
    public init(bits: Int, table: [Float]) { self.bits = bits; self.table = table }
}

/// How a constant tensor's bytes encode its values.
public enum WeightEncoding: Codable, Hashable, Sendable, CustomStringConvertible {
    /// IEEE binary32, little-endian, row-major.
    case float32
    /// IEEE binary16, little-endian, row-major (Core ML `float16Value`).
    case float16
    /// n-bit unsigned codes, MSB-first packed, row-major, + per-channel affine.
    case linear(LinearQuantization)
    /// n-bit unsigned codes, MSB-first packed, row-major, + table.
    case lookupTable(LookupTableQuantization)
    // MARK: compressed ML program weights (bundle format 2.1, CompressedWeights.swift)
    /// n-bit codes, MSB-first packed, + per-block scale and zero point (float32, in the bytes).
    case blockwise(BlockwiseQuantization)
    /// n-bit codes, MSB-first packed, + one 2^n-entry palette per block (float32, in the bytes).
    case palettized(PalettizedQuantization)
    /// A bit mask of the non-zero positions + the non-zero values in an inner encoding.
    indirect case sparse(SparseEncoding)

    public var description: String {
        switch self {
        case .float32: return "fp32"
        case .float16: return "fp16"
        case let .linear(q): return "\(q.bits)-bit linear"
        case let .lookupTable(q): return "\(q.bits)-bit LUT"
        case let .blockwise(q): return "\(q.bits)-bit \(q.signed ? "signed " : "")blockwise"
        case let .palettized(q): return "\(q.bits)-bit palettized"
        case let .sparse(s): return "sparse \(s.values.description)"
        }
    }

    /// Bytes needed to store `count` values in this encoding.
    public func byteCount(forElements count: Int) -> Int {
        switch self {
        case .float32: return count * 4
        case .float16: return count * 2
        case let .linear(q): return Swift.max(1, (count * q.bits + 7) / 8)
        case let .lookupTable(q): return Swift.max(1, (count * q.bits + 7) / 8)
        case .blockwise, .palettized, .sparse: return compressedByteCount(forElements: count)
        }
    }
}

/// A weight tensor (constant) attached to a node: a shape, an encoding, and the bytes.
///
/// Shapes are the op's canonical weight layout, documented on each `Op` case (e.g. conv2d weight
/// is [outputChannels, inputChannels/groups, kH, kW], as Core ML `ConvolutionLayerParams.weights`).
public final class ConstantTensor: @unchecked Sendable {
    public let shape: [Int]
    public let encoding: WeightEncoding
    public let storage: ByteStorage

    /// - Throws: `GraphError.invalidConstant` if `storage` is shorter than the encoding requires, if
    ///   a compressed encoding's fields do not fit `shape` (`WeightEncoding.validate(shape:)`), or
    ///   if a sparse mask's set bits differ from its `nonzeroCount`.
    public init(shape: [Int], encoding: WeightEncoding, storage: ByteStorage) throws {
        if encoding.isFormat21Encoding { try encoding.validate(shape: shape) }
        let need = encoding.byteCount(forElements: shape.reduce(1, *))
        guard storage.count >= need else {
            throw GraphError.invalidConstant(
                "constant of shape \(formatShape(shape)) in \(encoding) needs \(need) bytes, found \(storage.count)")
        }
        self.shape = shape
        self.encoding = encoding
        self.storage = storage
        if case let .sparse(s) = encoding { try checkSparseMask(s) }
    }

    /// A float32 constant holding a copy of `values` (row-major, `values.count` = product of `shape`).
    public convenience init(shape: [Int], floats values: [Float]) {
        precondition(values.count == shape.reduce(1, *), "ConstantTensor: \(values.count) values for shape \(shape)")
        // Cannot fail: storage size matches by construction.
        try! self.init(shape: shape, encoding: .float32, storage: .copying(floats: values))
    }

    public var elementCount: Int { shape.reduce(1, *) }

    /// Bytes used by the encoded values (excluding quantization parameters).
    public var encodedByteCount: Int { encoding.byteCount(forElements: elementCount) }

    /// Pointer to the values when the encoding is float32 (no copy), else nil.
    public var float32Pointer: UnsafePointer<Float>? {
        guard case .float32 = encoding else { return nil }
        return storage.baseAddress.assumingMemoryBound(to: Float.self)
    }

    /// The values as float32 (a dequantized copy for fp16 and quantized encodings).
    public func floats() -> [Float] {
        let n = elementCount
        switch encoding {
        case .float32:
            return Array(UnsafeBufferPointer(start: storage.baseAddress.assumingMemoryBound(to: Float.self), count: n))
        case .float16:
            let p = storage.baseAddress.assumingMemoryBound(to: UInt16.self)
            return (0..<n).map { Float(Float16(bitPattern: UInt16(littleEndian: p[$0]))) }
        case let .linear(q):
            let codes = unpackCodes(bits: q.bits, count: n)
            let axisLen = q.axis < shape.count ? shape[q.axis] : 1
            let inner = q.axis < shape.count ? shape[(q.axis + 1)...].reduce(1, *) : 1
            return (0..<n).map { i in
                let c = q.scale.count == 1 ? 0 : (i / inner) % axisLen
                let b = q.bias.isEmpty ? 0 : q.bias[q.bias.count == 1 ? 0 : c]
                return Float(codes[i]) * q.scale[c] + b
            }
        case let .lookupTable(q):
            let codes = unpackCodes(bits: q.bits, count: n)
            return codes.map { q.table[Int($0)] }
        case .blockwise, .palettized, .sparse:
            return encoding.expandCompressed(storage.buffer, shape: shape, positions: nil)
        }
    }

    /// Unpacks `count` MSB-first packed codes of `bits` bits each (coreml-format-facts §2.8).
    public func unpackCodes(bits: Int, count: Int) -> [UInt8] {
        unpackMSBFirst(storage.buffer, bits: bits, count: count)
    }
}

/// Unpacks `count` unsigned codes of `bits` (1…8) bits each, packed MSB-first into `bytes`.
public func unpackMSBFirst(_ bytes: UnsafeRawBufferPointer, bits: Int, count: Int) -> [UInt8] {
    if bits == 8 { return Array(bytes.prefix(count)) }
    var out = [UInt8](repeating: 0, count: count)
    let mask = (1 << bits) - 1
    var bitPos = 0
    for i in 0..<count {
        var v = 0
        for _ in 0..<bits {
            let byte = Int(bytes[bitPos >> 3])
            v = (v << 1) | ((byte >> (7 - (bitPos & 7))) & 1)
            bitPos += 1
        }
        out[i] = UInt8(v & mask)
    }
    return out
}

/// Packs unsigned codes of `bits` (1…8) bits each MSB-first, zero-padding the last byte
/// (coremltools `_convert_array_to_nbit_quantized_bytes`).
public func packMSBFirst(_ codes: [UInt8], bits: Int) -> [UInt8] {
    if bits == 8 { return codes.isEmpty ? [0] : codes }
    var out = [UInt8](repeating: 0, count: Swift.max(1, (codes.count * bits + 7) / 8))
    var bitPos = 0
    for c in codes {
        for b in stride(from: bits - 1, through: 0, by: -1) {
            if (Int(c) >> b) & 1 == 1 { out[bitPos >> 3] |= UInt8(1 << (7 - (bitPos & 7))) }
            bitPos += 1
        }
    }
    return out
}
