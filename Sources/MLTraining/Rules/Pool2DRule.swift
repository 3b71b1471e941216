// pooling (IR `pool2d`, `globalPool2d`), NHWC.
import MLGraph

/// Max pooling routes dL/dy to the first maximum of each window (row-major scan, padding never
/// wins); average pooling spreads dL/dy evenly over the window's in-bounds pixels (the IR's
/// average excludes padding, Core ML's avgPoolExcludePadding; the importer pads explicitly when
/// a model counts padded zeros).
enum Pool2DRule: LayerRule {
    struct Geometry { var n, h, w, c, kh, kw, sh, sw, top, left, ho, wo: Int; var kind: PoolKind }

    static func geometry(_ node: Node, _ x: TrainTensor) throws -> Geometry {
        guard case let .pool2d(a) = node.op else { throw RuleFailure("is not a pool2d node") }
        guard x.shape.count == 4 else { throw RuleFailure("expects an NHWC input, found shape \(x.shape)") }
        let (n, h, w, c) = (x.shape[0], x.shape[1], x.shape[2], x.shape[3])
        let (kh, kw, sh, sw) = (a.kernel[0], a.kernel[1], a.strides[0], a.strides[1])
        let p = a.padding.resolve(inH: h, inW: w, kernel: (kh, kw), stride: (sh, sw), dilation: (1, 1))
        let ho = (h + p.top + p.bottom - kh) / sh + 1
        let wo = (w + p.left + p.right - kw) / sw + 1
        guard ho > 0, wo > 0 else { throw RuleFailure("the output would be empty") }
        return Geometry(n: n, h: h, w: w, c: c, kh: kh, kw: kw, sh: sh, sw: sw, top: p.top, left: p.left, ho: ho, wo: wo, kind: a.kind)
    }

    /// For output pixel (n, i, j) and channel ch: the input indices of its window.
    @inline(__always)
    static func window(_ g: Geometry, _ n: Int, _ i: Int, _ j: Int, _ ch: Int) -> [Int] {
        var out: [Int] = []
        out.reserveCapacity(g.kh * g.kw)
        for p in 0..<g.kh {
            let y = i * g.sh + p - g.top
            if y < 0 || y >= g.h { continue }
            for q in 0..<g.kw {
                let x = j * g.sw + q - g.left
                if x < 0 || x >= g.w { continue }
                out.append(((n * g.h + y) * g.w + x) * g.c + ch)
            }
        }
        return out
    }

    static func forward(_ node: Node, inputs: [TrainTensor], weights: [String: [Float]]) throws -> TrainTensor {
        let x = try node.checkedSingleInput(inputs)
        let g = try geometry(node, x)
        var y = [Float](repeating: 0, count: g.n * g.ho * g.wo * g.c)
        for n in 0..<g.n { for i in 0..<g.ho { for j in 0..<g.wo { for ch in 0..<g.c {
            let win = window(g, n, i, j, ch)
            let o = ((n * g.ho + i) * g.wo + j) * g.c + ch
            if win.isEmpty { continue }
            if g.kind == .max {
                var m = x.values[win[0]]
                for k in win.dropFirst() where x.values[k] > m { m = x.values[k] }
                y[o] = m
            } else {
                var s: Float = 0
                for k in win { s += x.values[k] }
                y[o] = s / Float(win.count)
            }
        } } } }
        return TrainTensor(shape: [g.n, g.ho, g.wo, g.c], values: y)
    }

    static func backward(_ node: Node, inputs: [TrainTensor], output: TrainTensor, gradOutput gy: TrainTensor,
                         weights: [String: [Float]], needInputs: [Bool], needWeights: Bool) throws -> Gradients {
        let x = try node.checkedSingleInput(inputs)
        guard needInputs.first == true else { return Gradients(inputs: [nil]) }
        let g = try geometry(node, x)
        var gx = [Float](repeating: 0, count: x.count)
        for n in 0..<g.n { for i in 0..<g.ho { for j in 0..<g.wo { for ch in 0..<g.c {
            let win = window(g, n, i, j, ch)
            let go = gy.values[((n * g.ho + i) * g.wo + j) * g.c + ch]
            if win.isEmpty { continue }
            if g.kind == .max {
                var best = win[0]
                for k in win.dropFirst() where x.values[k] > x.values[best] { best = k }
                gx[best] += go
            } else {
                let share = go / Float(win.count)
                for k in win { gx[k] += share }
            }
        } } } }
        return Gradients(inputs: [TrainTensor(shape: x.shape, values: gx)])
    }
}

/// Global max / average pooling [N, H, W, C] → [N, C] (or [N, 1, 1, C] with keepDims).
enum GlobalPool2DRule: LayerRule {
    static func parts(_ node: Node, _ x: TrainTensor) throws -> (PoolKind, Bool, Int, Int, Int) {
        guard case let .globalPool2d(kind, keep) = node.op else { throw RuleFailure("is not a globalPool2d node") }
        guard x.shape.count == 4 else { throw RuleFailure("expects an NHWC input, found shape \(x.shape)") }
        return (kind, keep, x.shape[0], x.shape[1] * x.shape[2], x.shape[3])
    }

    static func forward(_ node: Node, inputs: [TrainTensor], weights: [String: [Float]]) throws -> TrainTensor {
        let x = try node.checkedSingleInput(inputs)
        let (kind, keep, n, hw, c) = try parts(node, x)
        var y = [Float](repeating: 0, count: n * c)
        for b in 0..<n { for ch in 0..<c {
            var acc: Float = kind == .max ? -.infinity : 0
            for k in 0..<hw {
                let v = x.values[(b * hw + k) * c + ch]
                if kind == .max { if v > acc { acc = v } } else { acc += v }
            }
            y[b * c + ch] = kind == .max ? acc : acc / Float(hw)
        } }
        return TrainTensor(shape: keep ? [n, 1, 1, c] : [n, c], values: y)
    }

    static func backward(_ node: Node, inputs: [TrainTensor], output: TrainTensor, gradOutput gy: TrainTensor,
                         weights: [String: [Float]], needInputs: [Bool], needWeights: Bool) throws -> Gradients {
        let x = try node.checkedSingleInput(inputs)
        guard needInputs.first == true else { return Gradients(inputs: [nil]) }
        let (kind, _, n, hw, c) = try parts(node, x)
        var gx = [Float](repeating: 0, count: x.count)
        for b in 0..<n { for ch in 0..<c {
            let go = gy.values[b * c + ch]
            if kind == .max {
                var best = b * hw * c + ch
                for k in 0..<hw where x.values[(b * hw + k) * c + ch] > x.values[best] { best = (b * hw + k) * c + ch }
                gx[best] += go
            } else {
                for k in 0..<hw { gx[(b * hw + k) * c + ch] += go / Float(hw) }
            }
        } }
        return Gradients(inputs: [TrainTensor(shape: x.shape, values: gx)])
    }
}
