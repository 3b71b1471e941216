import MLGraph

/// Element-type-agnostic versions of the data-movement ops (reshape, identity, transpose, concat,
/// crop, repeatVector): they copy elements of any size, so these ops also run on int32, int64,
/// bool and float16 tensors (e.g. argmax → reshape). `KernelRegistry.makeKernel` tries them when
/// the op's float32 reference kernel cannot take the node's element types; each factory returns
/// nil when every tensor is float32 (the float kernels keep running those) or the inputs' types
/// differ.
enum TypedDataMovementKernels {
    static let table: [OpKind: KernelFactory] = [
        .reshape: copy, .reshapeND: copy, .identity: copy, .transpose: transpose, .concat: concat, .crop: crop, .repeatVector: repeatVector,
    ]

    /// Whether the node has a non-float32 tensor and one element type throughout; its byte size.
    private static func uniformNonFloat(_ ctx: KernelContext) -> Int? {
        let all = ctx.inputTypes + ctx.outputTypes
        guard let t = all.first?.elementType, t != .float32, all.allSatisfy({ $0.elementType == t }) else { return nil }
        return t.byteSize
    }

    final class Copy: ReferenceTypedKernel {}
    final class Transpose: ReferenceTypedKernel {}
    final class Concat: ReferenceTypedKernel {}
    final class Crop: ReferenceTypedKernel {}
    final class RepeatVector: ReferenceTypedKernel {}

    /// Reshape and identity: the bytes as they are (row-major order is unchanged).
    static func copy(_ ctx: KernelContext) throws -> Kernel? {
        guard let size = uniformNonFloat(ctx) else { return nil }
        let bytes = ctx.inputTypes[0].elementCount * size
        return Copy { ins, outs in if UnsafeRawPointer(outs[0]) != ins[0] { outs[0].copyMemory(from: ins[0], byteCount: bytes) } }
    }

    /// Output axis d = input axis perm[d].
    static func transpose(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .transpose(perm) = ctx.node.op, let size = uniformNonFloat(ctx) else { return nil }
        let inStrides = rowMajorStrides(ctx.inputTypes[0].shape)
        let out = ctx.outputTypes[0].shape
        let strides = perm.map { inStrides[$0] }
        return Transpose { ins, outs in
            var it = Odometer(shape: out, strides: [strides])
            for o in 0..<out.reduce(1, *) {
                (outs[0] + o * size).copyMemory(from: ins[0] + it.offsets[0] * size, byteCount: size)
                it.advance()
            }
        }
    }

    /// Concatenation along `axis`: per outer index, each input's block in turn.
    static func concat(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .concat(rawAxis) = ctx.node.op, let size = uniformNonFloat(ctx) else { return nil }
        let out = ctx.outputTypes[0].shape
        guard let axis = resolvedAxis(rawAxis, rank: out.count) else { return nil }
        let outer = out[..<axis].reduce(1, *), inner = out[(axis + 1)...].reduce(1, *)
        let blocks = ctx.inputTypes.map { $0.shape[axis] * inner * size }
        let row = blocks.reduce(0, +)
        return Concat { ins, outs in
            for o in 0..<outer {
                var at = o * row
                for (k, b) in blocks.enumerated() {
                    (outs[0] + at).copyMemory(from: ins[k] + o * b, byteCount: b)
                    at += b
                }
            }
        }
    }

    /// Removes `crops[d] = [before, after]` on each axis.
    static func crop(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .crop(crops) = ctx.node.op, let size = uniformNonFloat(ctx) else { return nil }
        let inStrides = rowMajorStrides(ctx.inputTypes[0].shape)
        let out = ctx.outputTypes[0].shape
        let base = zip(crops, inStrides).reduce(0) { $0 + $1.0[0] * $1.1 }
        return Crop { ins, outs in
            var it = Odometer(shape: out, strides: [inStrides], base: [base])
            for o in 0..<out.reduce(1, *) {
                (outs[0] + o * size).copyMemory(from: ins[0] + it.offsets[0] * size, byteCount: size)
                it.advance()
            }
        }
    }

    /// [N, D] → [N, n, D].
    static func repeatVector(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .repeatVector(n) = ctx.node.op, let size = uniformNonFloat(ctx) else { return nil }
        let s = ctx.inputTypes[0].shape
        let row = s[1] * size
        return RepeatVector { ins, outs in
            for b in 0..<s[0] {
                for r in 0..<n { (outs[0] + (b * n + r) * row).copyMemory(from: ins[0] + b * row, byteCount: row) }
            }
        }
    }
}
