import Foundation
import MLGraph

/// Fast data-movement kernels (no arithmetic): crop, constant pad and nearest upsampling move whole
/// contiguous runs with `memcpy` instead of one element at a time. Their reference twins in
/// Kernels/Reference are the oracle (`Tests/MLRuntimeTests/FastCopyKernelTests.swift`).
enum FastCopyKernels {
    /// Shared geometry of crop and constant pad: the output is the input with `before[d]` elements
    /// added (pad, ≥ 0) or removed (crop, ≤ 0) at the start of each axis. Copies the overlapping
    /// region row by row; runs are the longest suffix of axes whose extent is unchanged.
    final class Window: Kernel {
        let inShape: [Int], outShape: [Int]
        /// Offset of input index 0 in output coordinates, per axis (positive for pad, negative for crop).
        let shift: [Int]
        let fill: Float?
        init(inShape: [Int], outShape: [Int], shift: [Int], fill: Float?) {
            self.inShape = inShape; self.outShape = outShape; self.shift = shift; self.fill = fill
        }

        func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
            let x = inputs[0], y = outputs[0]
            if let fill { y.update(repeating: fill, count: outShape.reduce(1, *)) }
            let r = inShape.count
            // Overlap extent per axis, and its start in input and output coordinates.
            let extent = (0..<r).map { min(inShape[$0], outShape[$0] - shift[$0]) - max(0, -shift[$0]) }
            guard extent.allSatisfy({ $0 > 0 }) else { return }
            var inner = r  // axes ≥ inner are copied whole, as one run
            var run = 1
            while inner > 0, extent[inner - 1] == inShape[inner - 1], extent[inner - 1] == outShape[inner - 1] {
                inner -= 1; run *= inShape[inner]
            }
            if inner > 0 { run *= extent[inner - 1]; inner -= 1 }
            let inStr = rowMajorStrides(inShape), outStr = rowMajorStrides(outShape)
            var idx = [Int](repeating: 0, count: inner)
            let xBase = (0..<r).reduce(0) { $0 + max(0, -shift[$1]) * inStr[$1] }
            let yBase = (0..<r).reduce(0) { $0 + max(0, shift[$1]) * outStr[$1] }
            let rows = extent.prefix(inner).reduce(1, *)
            for _ in 0..<rows {
                var xo = xBase, yo = yBase
                for d in 0..<inner { xo += idx[d] * inStr[d]; yo += idx[d] * outStr[d] }
                (y + yo).update(from: x + xo, count: run)
                var d = inner - 1
                while d >= 0 {
                    idx[d] += 1
                    if idx[d] < extent[d] { break }
                    idx[d] = 0; d -= 1
                }
            }
        }
    }

    static func crop(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .crop(crops) = ctx.node.op, ctx.inputTypes[0].elementType == .float32 else { return nil }
        return Window(inShape: ctx.inputTypes[0].shape, outShape: ctx.outputTypes[0].shape, shift: crops.map { -$0[0] }, fill: nil)
    }

    static func pad(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .pad(p) = ctx.node.op, p.mode == .constant, ctx.inputTypes[0].elementType == .float32 else { return nil }
        return Window(inShape: ctx.inputTypes[0].shape, outShape: ctx.outputTypes[0].shape, shift: p.pads.map { $0[0] }, fill: p.value)
    }

    /// Nearest-neighbour upsampling of NHWC by integer factors: each source pixel's C values are
    /// copied sH·sW times; a finished output row is duplicated with one copy per repeat.
    final class UpsampleNearest: Kernel {
        let n: Int, h: Int, w: Int, c: Int, sh: Int, sw: Int
        init(_ s: [Int], _ scale: [Int]) { n = s[0]; h = s[1]; w = s[2]; c = s[3]; sh = scale[0]; sw = scale[1] }
        func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
            let x = inputs[0], y = outputs[0]
            let outRow = w * sw * c
            for b in 0..<n {
                for i in 0..<h {
                    let src = x + (b * h + i) * w * c
                    let dst = y + (b * h * sh + i * sh) * outRow
                    for j in 0..<w {
                        for k in 0..<sw { (dst + (j * sw + k) * c).update(from: src + j * c, count: c) }
                    }
                    for r in stride(from: 1, to: sh, by: 1) { (dst + r * outRow).update(from: dst, count: outRow) }
                }
            }
        }
    }

    static func upsample(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .upsample2d(a) = ctx.node.op, a.mode == .nearest, ctx.inputTypes[0].elementType == .float32 else { return nil }
        return UpsampleNearest(ctx.inputTypes[0].shape, a.scale)
    }
}
