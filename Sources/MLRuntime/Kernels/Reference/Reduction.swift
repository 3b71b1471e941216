import Foundation
import MLGraph

/// A row-major tensor split by a set of axes into slices: one *group* per index of the other
/// (kept) axes, in row-major order — the output order of a reduction — each holding one
/// *member* per index of the set's axes, in row-major order of those axes (the flat index of a
/// weight shaped like the set, as layer-norm gamma).
struct AxisSplit {
    /// Element offset of each group's first member.
    let groupOffsets: [Int]
    /// Offset of each member from its group's first member.
    let memberOffsets: [Int]

    init(shape: [Int], axes: [Int]) {
        let strides = rowMajorStrides(shape)
        let kept = shape.indices.filter { !axes.contains($0) }
        groupOffsets = Self.offsets(kept.map { shape[$0] }, kept.map { strides[$0] })
        memberOffsets = Self.offsets(axes.map { shape[$0] }, axes.map { strides[$0] })
    }

    /// Offsets Σ index[d]·strides[d] of every multi-index of `dims`, in row-major order.
    static func offsets(_ dims: [Int], _ strides: [Int]) -> [Int] {
        let n = dims.reduce(1, *)
        var out = [Int](repeating: 0, count: n)
        var odo = Odometer(shape: dims, strides: [strides])
        for i in 0..<n {
            out[i] = odo.offsets[0]
            odo.advance()
        }
        return out
    }
}

/// Reference `Op.reduce`: for each group of the kept axes (output in row-major order, which is
/// the same with or without `keepDims`), the function of `ReduceFunction` over the members,
/// accumulated in Double. max/min propagate NaN; log-sum-exp subtracts the maximum first (an
/// all −∞ slice gives −∞, a +∞ gives +∞).
final class ReferenceReduce: Kernel {
    let function: ReduceFunction
    let split: AxisSplit

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .reduce(a) = ctx.node.op else { return nil }
        let shape = ctx.inputTypes[0].shape
        guard let axes = resolveAxisSet(a.axes, rank: shape.count) else {
            throw RuntimeError.kernelFailure(node: ctx.node.name, message: "reduce: invalid axes \(a.axes) for shape \(formatShape(shape))")
        }
        return ReferenceReduce(function: a.function, split: AxisSplit(shape: shape, axes: axes))
    }

    private init(function: ReduceFunction, split: AxisSplit) { self.function = function; self.split = split }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0]
        let members = split.memberOffsets
        for (g, base) in split.groupOffsets.enumerated() {
            y[g] = Self.reduce(function, members.lazy.map { Double(x[base + $0]) }, count: members.count)
        }
    }

    static func reduce<S: Sequence>(_ f: ReduceFunction, _ values: S, count: Int) -> Float where S.Element == Double {
        switch f {
        case .sum: return Float(values.reduce(0, +))
        case .mean: return Float(values.reduce(0, +) / Double(count))
        case .prod: return Float(values.reduce(1, *))
        case .max:
            var m = -Double.infinity
            for v in values { if v.isNaN { return .nan }; if v > m { m = v } }
            return Float(m)
        case .min:
            var m = Double.infinity
            for v in values { if v.isNaN { return .nan }; if v < m { m = v } }
            return Float(m)
        case .l1Norm: return Float(values.reduce(0) { $0 + abs($1) })
        case .l2Norm: return Float(values.reduce(0) { $0 + $1 * $1 }.squareRoot())
        case .sumSquare: return Float(values.reduce(0) { $0 + $1 * $1 })
        case .logSumExp:
            var m = -Double.infinity
            for v in values { if v.isNaN { return .nan }; if v > m { m = v } }
            if m.isInfinite { return Float(m) }
            return Float(m + log(values.reduce(0) { $0 + exp($1 - m) }))
        }
    }
}

