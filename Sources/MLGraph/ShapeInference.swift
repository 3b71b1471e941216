extension Graph {
    /// Computes the static type of every tensor from the inputs' types, node by node, and stores
    /// them in `tensorTypes` (replacing what was there).
    ///
    /// - Throws: `GraphError.invalidTopology` when a node reads a tensor not produced earlier;
    ///   `GraphError.invalidNode` when an op's inputs, attributes or weights do not fit together
    ///   (the message gives expected and found shapes).
    public mutating func inferShapes() throws {
        var types: [String: TensorType] = [:]
        for i in inputs {
            guard let problem = i.type.shapeProblem else { types[i.name] = i.type; continue }
            throw GraphError.invalidTopology("input '\(i.name)' has shape \(formatShape(i.type.shape)): \(problem)")
        }
        for node in nodes {
            var ins: [TensorType] = []
            for name in node.inputs {
                guard let t = types[name] else {
                    throw GraphError.invalidTopology(
                        "node '\(node.name)' (\(node.op.name)) reads tensor '\(name)', which no earlier node or input produces")
                }
                ins.append(t)
            }
            let outs = try node.inferOutputTypes(ins)
            for (name, t) in zip(node.outputs, outs) {
                if let problem = t.shapeProblem {
                    throw GraphError.invalidNode(node: node.name, op: node.op.name,
                        message: "output '\(name)' would have shape \(formatShape(t.shape)): \(problem)")
                }
            }
            guard outs.count == node.outputs.count else {
                throw GraphError.invalidNode(node: node.name, op: node.op.name,
                    message: "produces \(outs.count) outputs, but \(node.outputs.count) output names are given")
            }
            for (name, t) in zip(node.outputs, outs) {
                if types[name] != nil {
                    throw GraphError.invalidTopology("tensor '\(name)' is produced twice (again by node '\(node.name)')")
                }
                types[name] = t
            }
        }
        for o in outputs where types[o] == nil {
            throw GraphError.invalidTopology("graph output '\(o)' is not produced by any node or input")
        }
        tensorTypes = types
    }
}

extension TensorType {
    /// Largest element count a tensor may have (2⁴⁰): products of dimensions cannot overflow.
    public static let maxElementCount = 1 << 40

    /// Why this shape is unusable (a non-positive dimension, or too many elements), or nil.
    public var shapeProblem: String? {
        guard !shape.isEmpty else { return "rank 0 (a scalar) is not a tensor the IR supports" }
        var n = 1
        for d in shape {
            guard d > 0 else { return "dimension \(d) is not positive" }
            let (p, overflow) = n.multipliedReportingOverflow(by: d)
            guard !overflow, p <= TensorType.maxElementCount else { return "more than 2^40 elements" }
            n = p
        }
        return nil
    }
}

extension Node {
    /// Largest window attribute (kernel, stride, dilation, scale) and padding / pad / crop amount.
    public static let maxWindowAttribute = 1 << 20
    /// Largest count attribute (channels, groups, units, repeats).
    public static let maxCountAttribute = 1 << 24

    /// Checks that attribute arrays have the lengths, signs and magnitudes the op needs, so that
    /// shape inference and kernels can index them and no size computation overflows — for graphs
    /// built in code and for graphs read from a file, damaged or crafted (the `.mlbundle` reader
    /// relies on it). `inferOutputTypes` calls it first. - Throws: `GraphError.invalidNode`.
    public func checkAttributes() throws {
        let w = Node.maxWindowAttribute
        func pair(_ v: [Int], _ what: String, min: Int = 1) throws {
            guard v.count == 2, v.allSatisfy({ $0 >= min && $0 <= w }) else {
                throw fail("\(what) must be two integers in \(min)…\(w), found \(v)")
            }
        }
        func pads(_ p: PaddingMode) throws {
            if case let .explicit(t, b, l, r) = p, ![t, b, l, r].allSatisfy({ $0 >= 0 && $0 <= w }) {
                throw fail("explicit padding must be in 0…\(w), found \([t, b, l, r])")
            }
        }
        func count(_ v: Int, _ what: String) throws {
            guard v >= 1, v <= Node.maxCountAttribute else { throw fail("\(what) must be in 1…\(Node.maxCountAttribute), found \(v)") }
        }
        func amounts(_ v: [[Int]], _ what: String) throws {
            guard v.count <= 32, v.allSatisfy({ $0.count == 2 && $0.allSatisfy { $0 >= 0 && $0 <= w } }) else {
                throw fail("\(what) must be [before, after] pairs in 0…\(w), found \(v)")
            }
        }
        switch op {
        case let .conv2d(a):
            try pair(a.kernel, "kernel"); try pair(a.strides, "strides"); try pair(a.dilations, "dilations"); try pads(a.padding)
            try count(a.outputChannels, "outputChannels"); try count(a.groups, "groups")
        case let .deconv2d(a):
            try pair(a.kernel, "kernel"); try pair(a.strides, "strides"); try pair(a.dilations, "dilations")
            try pair(a.outputPadding, "outputPadding", min: 0); try pads(a.padding)
            try count(a.outputChannels, "outputChannels"); try count(a.groups, "groups")
        case let .dense(a):
            try count(a.outputChannels, "outputChannels")
        case let .pool2d(a):
            try pair(a.kernel, "kernel"); try pair(a.strides, "strides"); try pads(a.padding)
        case let .upsample2d(a):
            try pair(a.scale, "scale")
        case let .pad(a):
            try amounts(a.pads, "pads")
        case let .crop(crops):
            try amounts(crops, "crops")
        case let .reshape(t):
            guard !t.isEmpty, t.count <= 32, t.filter({ $0 == -1 }).count <= 1,
                  t.allSatisfy({ $0 == -1 || ($0 > 0 && $0 <= TensorType.maxElementCount) }),
                  TensorType(t.map { $0 == -1 ? 1 : $0 }).shapeProblem == nil
            else {
                throw fail("target shape \(t) must be at most 32 positive dimensions (one may be -1) with at most 2^40 elements")
            }
        case let .transpose(perm):
            guard perm.count <= 32 else { throw fail("perm has \(perm.count) entries") }
        case let .repeatVector(n):
            try count(n, "n")
        case let .recurrent(a):
            try count(a.units, "units")
            if a.resetAfter, a.kind != .gru { throw fail("resetAfter applies to GRU only") }
        case let .embedding(d):
            try count(d, "outputChannels")
        case let .custom(a):
            guard a.outputShapes.count <= 1024 else { throw fail("\(a.outputShapes.count) output shapes (at most 1024)") }
            for s in a.outputShapes {
                if let problem = TensorType(s).shapeProblem { throw fail("output shape \(formatShape(s)): \(problem)") }
            }
        case let .batchNorm(a):
            guard a.epsilon >= 0, a.epsilon.isFinite else { throw fail("epsilon must be finite and ≥ 0, found \(a.epsilon)") }
        default:
            break
        }
    }

    private func fail(_ message: String) -> GraphError {
        GraphError.invalidNode(node: name, op: op.name, message: message)
    }

    private func expectInputs(_ ins: [TensorType], _ n: Int) throws {
        guard ins.count == n else { throw fail("expects \(n) input(s), found \(ins.count)") }
    }

    private func expectRank(_ t: TensorType, _ r: Int, _ what: String = "input") throws {
        guard t.rank == r else { throw fail("expects a rank-\(r) \(what), found shape \(formatShape(t.shape))") }
    }

    private func weight(_ key: String, shape: [Int]?, optional: Bool = false) throws {
        guard let w = weights[key] else {
            if optional { return }
            throw fail("missing weight '\(key)'" + (shape.map { " of shape \(formatShape($0))" } ?? ""))
        }
        if let shape, w.shape != shape {
            throw fail("weight '\(key)' should have shape \(formatShape(shape)), found \(formatShape(w.shape))")
        }
    }

    /// Output types for the given input types; also checks the weights' shapes.
    /// - Throws: `GraphError.invalidNode` naming this node.
    public func inferOutputTypes(_ ins: [TensorType]) throws -> [TensorType] {
        try checkAttributes()
        for (i, t) in ins.enumerated() {
            if let problem = t.shapeProblem { throw fail("input \(i) has shape \(formatShape(t.shape)): \(problem)") }
        }
        let dtype = ins.first?.elementType ?? .float32
        switch op {
        case let .conv2d(a):
            try expectInputs(ins, 1); try expectRank(ins[0], 4, "NHWC input")
            let s = ins[0].shape, cin = s[3]
            guard a.groups >= 1, cin % a.groups == 0, a.outputChannels % a.groups == 0 else {
                throw fail("groups \(a.groups) must divide input channels \(cin) and output channels \(a.outputChannels)")
            }
            try weight("weight", shape: [a.outputChannels, cin / a.groups, a.kernel[0], a.kernel[1]])
            try weight("bias", shape: [a.outputChannels], optional: true)
            let (h, w) = try windowOutput(s[1], s[2], a.kernel, a.strides, a.dilations, a.padding)
            return [TensorType([s[0], h, w, a.outputChannels], dtype)]
        case let .deconv2d(a):
            try expectInputs(ins, 1); try expectRank(ins[0], 4, "NHWC input")
            let s = ins[0].shape, cin = s[3]
            guard a.groups >= 1, cin % a.groups == 0, a.outputChannels % a.groups == 0 else {
                throw fail("groups \(a.groups) must divide input channels \(cin) and output channels \(a.outputChannels)")
            }
            try weight("weight", shape: [cin, a.outputChannels / a.groups, a.kernel[0], a.kernel[1]])
            try weight("bias", shape: [a.outputChannels], optional: true)
            let hw = (0..<2).map { i -> Int in deconvOutputSize(s[1 + i], axis: i, a) }
            guard hw.allSatisfy({ $0 > 0 }) else { throw fail("output size \(hw) is not positive") }
            return [TensorType([s[0], hw[0], hw[1], a.outputChannels], dtype)]
        case let .dense(a):
            try expectInputs(ins, 1)
            guard ins[0].rank >= 2 else { throw fail("expects rank ≥ 2 input, found \(formatShape(ins[0].shape))") }
            let cin = ins[0].shape.last!
            try weight("weight", shape: [a.outputChannels, cin])
            try weight("bias", shape: [a.outputChannels], optional: true)
            return [TensorType(Array(ins[0].shape.dropLast()) + [a.outputChannels], dtype)]
        case let .batchNorm(a):
            try expectInputs(ins, 1)
            guard a.axis >= 0, a.axis < ins[0].rank else { throw fail("axis \(a.axis) out of range for \(formatShape(ins[0].shape))") }
            let c = ins[0].shape[a.axis]
            try weight("mean", shape: [c]); try weight("variance", shape: [c])
            try weight("gamma", shape: [c], optional: true); try weight("beta", shape: [c], optional: true)
            return [ins[0]]
        case .activation, .identity:
            try expectInputs(ins, 1)
            return [ins[0]]
        case let .softmax(axis):
            try expectInputs(ins, 1)
            guard axis >= 0, axis < ins[0].rank else { throw fail("axis \(axis) out of range for \(formatShape(ins[0].shape))") }
            return [ins[0]]
        case .prelu:
            try expectInputs(ins, 1)
            guard let alpha = weights["alpha"] else { throw fail("missing weight 'alpha'") }
            let s = Array(ins[0].shape.dropFirst())
            guard alpha.shape.count == s.count, zip(alpha.shape, s).allSatisfy({ $0 == $1 || $0 == 1 }) else {
                throw fail("alpha shape \(formatShape(alpha.shape)) does not broadcast to \(formatShape(s))")
            }
            return [ins[0]]
        case let .pool2d(a):
            try expectInputs(ins, 1); try expectRank(ins[0], 4, "NHWC input")
            let s = ins[0].shape
            let (h, w) = try windowOutput(s[1], s[2], a.kernel, a.strides, [1, 1], a.padding)
            return [TensorType([s[0], h, w, s[3]], dtype)]
        case let .globalPool2d(_, keepDims):
            try expectInputs(ins, 1); try expectRank(ins[0], 4, "NHWC input")
            let s = ins[0].shape
            return [TensorType(keepDims ? [s[0], 1, 1, s[3]] : [s[0], s[3]], dtype)]
        case let .pad(a):
            try expectInputs(ins, 1)
            guard a.pads.count == ins[0].rank else {  // pairs and signs: checkAttributes
                throw fail("pads \(a.pads) need one non-negative [before, after] per axis of \(formatShape(ins[0].shape))")
            }
            if a.mode == .reflect {
                for (d, p) in zip(ins[0].shape, a.pads) where p[0] >= d || p[1] >= d {
                    throw fail("reflect padding \(p) must be smaller than the axis size \(d)")
                }
            }
            return [TensorType(zip(ins[0].shape, a.pads).map { $0 + $1[0] + $1[1] }, dtype)]
        case let .crop(crops):
            try expectInputs(ins, 1)
            guard crops.count == ins[0].rank else {  // pairs and signs: checkAttributes
                throw fail("crops \(crops) need one non-negative [before, after] per axis of \(formatShape(ins[0].shape))")
            }
            let out = zip(ins[0].shape, crops).map { $0 - $1[0] - $1[1] }
            guard out.allSatisfy({ $0 > 0 }) else { throw fail("cropping \(crops) leaves shape \(formatShape(out))") }
            return [TensorType(out, dtype)]
        case let .upsample2d(a):
            try expectInputs(ins, 1); try expectRank(ins[0], 4, "NHWC input")
            let s = ins[0].shape
            return [TensorType([s[0], s[1] * a.scale[0], s[2] * a.scale[1], s[3]], dtype)]
        case let .reshape(target):
            try expectInputs(ins, 1)
            let n = ins[0].shape[0]
            var t = target
            if let i = t.firstIndex(of: -1) {
                let known = t.enumerated().filter { $0.offset != i }.reduce(1) { $0 * $1.element }
                guard known > 0, (ins[0].elementCount / n) % known == 0 else {
                    throw fail("cannot reshape \(formatShape(ins[0].shape)) to \(formatShape(target))")
                }
                t[i] = ins[0].elementCount / n / known
            }
            let (total, overflow) = t.reduce(1, *).multipliedReportingOverflow(by: n)  // each factor ≤ 2^40
            guard !overflow, total == ins[0].elementCount else {
                throw fail("cannot reshape \(formatShape(ins[0].shape)) (\(ins[0].elementCount) elements) to \(formatShape([n] + target))")
            }
            return [TensorType([n] + t, dtype)]
        case let .transpose(perm):
            try expectInputs(ins, 1)
            guard perm.sorted() == Array(0..<ins[0].rank) else {
                throw fail("perm \(perm) is not a permutation of the \(ins[0].rank) axes")
            }
            return [TensorType(perm.map { ins[0].shape[$0] }, dtype)]
        case let .elementwise(kind):
            guard ins.count >= 2 else { throw fail("expects at least 2 inputs, found \(ins.count)") }
            if kind == .subtract { try expectInputs(ins, 2) }
            var shape = ins[0].shape
            for t in ins.dropFirst() {
                guard let b = broadcastShapes(shape, t.shape) else {
                    throw fail("input shapes \(ins.map { formatShape($0.shape) }.joined(separator: ", ")) do not broadcast")
                }
                shape = b
            }
            return [TensorType(shape, dtype)]
        case let .concat(axis):
            guard !ins.isEmpty else { throw fail("expects at least 1 input") }
            let r = ins[0].rank
            guard axis >= 0, axis < r else { throw fail("axis \(axis) out of range for rank \(r)") }
            var out = ins[0].shape
            for t in ins.dropFirst() {
                guard t.rank == r, (0..<r).allSatisfy({ $0 == axis || t.shape[$0] == out[$0] }) else {
                    throw fail("input shapes \(ins.map { formatShape($0.shape) }.joined(separator: ", ")) differ off axis \(axis)")
                }
                out[axis] += t.shape[axis]
            }
            return [TensorType(out, dtype)]
        case let .repeatVector(n):
            try expectInputs(ins, 1); try expectRank(ins[0], 2)
            return [TensorType([ins[0].shape[0], n, ins[0].shape[1]], dtype)]
        case let .custom(a):
            return a.outputShapes.map { TensorType($0, dtype) }
        case let .recurrent(a):
            let stateInputs = a.initialStates ? a.kind.stateCount * a.directions : 0
            try expectInputs(ins, 1 + stateInputs + (a.hasMask ? 1 : 0))
            try expectRank(ins[0], 3, "[N, T, D] input")
            let (n, t, d) = (ins[0].shape[0], ins[0].shape[1], ins[0].shape[2])
            for i in 0..<stateInputs where ins[1 + i].shape != [n, a.units] {
                throw fail("initial state \(i) should have shape \(formatShape([n, a.units])), found \(formatShape(ins[1 + i].shape))")
            }
            if a.hasMask, ins.last!.shape != [n, t] {
                throw fail("mask should have shape \(formatShape([n, t])), found \(formatShape(ins.last!.shape))")
            }
            let g = a.kind.gateCount * a.units
            for suffix in a.bidirectional == nil ? [""] : ["", "_backward"] {
                try weight("kernel" + suffix, shape: [g, d])
                try weight("recurrentKernel" + suffix, shape: [g, a.units])
                try weight("bias" + suffix, shape: [g], optional: true)
                try weight("recurrentBias" + suffix, shape: [g], optional: true)
            }
            let u = a.bidirectional == .concat ? 2 * a.units : a.units
            var outs = [TensorType(a.returnSequences ? [n, t, u] : [n, u], dtype)]
            if a.returnState {
                outs += Array(repeating: TensorType([n, a.units], dtype), count: a.kind.stateCount * a.directions)
            }
            return outs
        case let .embedding(d):
            try expectInputs(ins, 1); try expectRank(ins[0], 2, "[N, L] index input")
            guard let w = weights["weight"], w.shape.count == 2, w.shape[0] == d else {
                throw fail("missing weight 'weight' of shape (\(d), vocabulary size)")
            }
            return [TensorType(ins[0].shape + [d], dtype)]
        case .sequenceMask:
            try expectInputs(ins, 1)
            guard ins[0].rank >= 2 else { throw fail("expects rank ≥ 2 input, found \(formatShape(ins[0].shape))") }
            return [TensorType(Array(ins[0].shape.prefix(2)), dtype)]
        case .applyMask:
            try expectInputs(ins, 2)
            guard ins[0].rank >= 2, ins[1].shape == Array(ins[0].shape.prefix(2)) else {
                throw fail("mask shape \(formatShape(ins.count > 1 ? ins[1].shape : [])) must equal the first two axes of \(formatShape(ins[0].shape))")
            }
            return [ins[0]]
        }
    }

    private func windowOutput(_ h: Int, _ w: Int, _ k: [Int], _ s: [Int], _ d: [Int], _ p: PaddingMode) throws -> (Int, Int) {
        guard k.count == 2, s.count == 2, d.count == 2, k.allSatisfy({ $0 > 0 }), s.allSatisfy({ $0 > 0 }), d.allSatisfy({ $0 > 0 }) else {
            throw fail("kernel \(k), strides \(s), dilations \(d) must be two positive integers each")
        }
        let out: (Int, Int)
        switch p {
        case .same: out = ((h + s[0] - 1) / s[0], (w + s[1] - 1) / s[1])
        case .valid, .explicit:
            let pp = p.resolve(inH: h, inW: w, kernel: (k[0], k[1]), stride: (s[0], s[1]), dilation: (d[0], d[1]))
            let ekh = (k[0] - 1) * d[0] + 1, ekw = (k[1] - 1) * d[1] + 1
            out = ((h + pp.top + pp.bottom - ekh) / s[0] + 1, (w + pp.left + pp.right - ekw) / s[1] + 1)
        }
        guard out.0 > 0, out.1 > 0 else {
            throw fail("window \(k) stride \(s) on \(h)×\(w) with \(p) padding gives an empty output")
        }
        return out
    }
}

/// Full (uncropped) and final output size of a transposed convolution along spatial `axis` (0 = H).
public func deconvOutputSize(_ input: Int, axis: Int, _ a: Deconv2DAttributes) -> Int {
    let full = (input - 1) * a.strides[axis] + (a.kernel[axis] - 1) * a.dilations[axis] + 1 + a.outputPadding[axis]
    switch a.padding {
    case .valid: return full
    case .same: return input * a.strides[axis] + a.outputPadding[axis]
    case let .explicit(t, b, l, r): return full - (axis == 0 ? t + b : l + r)
    }
}

/// NumPy broadcasting of two shapes, or nil when they are incompatible.
public func broadcastShapes(_ a: [Int], _ b: [Int]) -> [Int]? {
    let r = max(a.count, b.count)
    let pa = Array(repeating: 1, count: r - a.count) + a, pb = Array(repeating: 1, count: r - b.count) + b
    var out: [Int] = []
    for (x, y) in zip(pa, pb) {
        if x == y || y == 1 { out.append(x) } else if x == 1 { out.append(y) } else { return nil }
    }
    return out
}
