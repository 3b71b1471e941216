import MLGraph

/// Bounds checked on every graph written to or read from a bundle, BEFORE shape inference runs,
/// so that no value read from a file (even one crafted to be hostile, or read with checksum
/// verification off) can make `inferShapes`/`verify`, `ConstantTensor` or a kernel trap on an
/// out-of-range index or an integer overflow: recorded tensor types and constants here; op
/// attributes by the IR's own `Node.checkAttributes`, which `inferOutputTypes` runs first.
/// Real models are far inside these bounds.
enum GraphLimits {
    /// Largest tensor dimension.
    static let maxDimension = Int(Int32.max)
    /// Largest element count of one tensor (activation or constant): 2^40.
    static let maxElements = 1 << 40
    /// Largest tensor rank.
    static let maxRank = 32
}

extension ConstantTensor {
    /// Checks a constant's shape and quantization parameters (the bytes are checked by init).
    static func checkBundleLimits(shape: [Int], encoding: WeightEncoding, what: String) throws {
        func fail(_ m: String) -> GraphError { .invalidConstant("\(what): \(m)") }
        guard shape.count <= GraphLimits.maxRank else { throw fail("rank \(shape.count) exceeds \(GraphLimits.maxRank)") }
        let n = try checkedElementCount(shape) { fail($0) }
        switch encoding {
        case .float32, .float16: break
        // MARK: compressed ML program weights (format 2.1)
        case .blockwise, .palettized, .sparse:
            do { try encoding.validate(shape: shape) } catch let GraphError.invalidConstant(m) { throw fail(m) }
        case let .linear(q):
            guard (1...8).contains(q.bits) else { throw fail("linear quantization with \(q.bits) bits (must be 1…8)") }
            guard q.axis >= 0, q.axis <= GraphLimits.maxRank else { throw fail("quantization axis \(q.axis) is out of range") }
            guard !q.scale.isEmpty || n == 0 else { throw fail("linear quantization has no scale") }
            if q.scale.count > 1 {
                guard q.axis < shape.count, q.scale.count == shape[q.axis] else {
                    throw fail("\(q.scale.count) scales for axis \(q.axis) of shape \(formatShape(shape)) (need 1 or one per channel)")
                }
            }
            guard q.bias.count <= 1 || q.bias.count == q.scale.count else {
                throw fail("\(q.bias.count) biases for \(q.scale.count) scales (need 0, 1 or one per scale)")
            }
        case let .lookupTable(q):
            guard (1...8).contains(q.bits) else { throw fail("look-up table quantization with \(q.bits) bits (must be 1…8)") }
            guard q.table.count == 1 << q.bits else {
                throw fail("look-up table has \(q.table.count) entries, \(q.bits)-bit codes need \(1 << q.bits)")
            }
        }
    }
}

/// Product of `shape`, or throws when a dimension is negative or too large or the product overflows
/// `GraphLimits.maxElements`.
func checkedElementCount(_ shape: [Int], _ fail: (String) -> Error) throws -> Int {
    var n = 1
    for d in shape {
        guard d >= 0, d <= GraphLimits.maxDimension else {
            throw fail("dimension \(d) of shape \(formatShape(shape)) is out of range 0…\(GraphLimits.maxDimension)")
        }
        let (p, o) = n.multipliedReportingOverflow(by: d)
        guard !o, p <= GraphLimits.maxElements else {
            throw fail("shape \(formatShape(shape)) has more than \(GraphLimits.maxElements) elements")
        }
        n = p
    }
    return n
}

/// A recorded tensor type: each known dimension in 1…`GraphLimits.maxDimension`, unknown ones
/// −1, and the IR's own bounds (`TensorType.shapeProblem`).
private func checkRecorded(_ t: TensorType, _ fail: (String) -> Error) throws {
    for d in t.shape where d != TensorType.unknown && (d < 1 || d > GraphLimits.maxDimension) {
        throw fail("dimension \(d) of shape \(formatShape(t.shape)) is out of range 1…\(GraphLimits.maxDimension) (or −1, unknown)")
    }
    if let problem = t.shapeProblem { throw fail(problem) }
}

extension Graph {
    /// Checks everything `verify()` relies on not to trap, then runs node-by-node type inference
    /// from the RECORDED types (each step bounded), requiring every tensor to have a recorded type
    /// equal to the inferred one. After this passes, `verify()` cannot overflow.
    /// - Throws: `GraphError`.
    func checkBundleLimits() throws {
        func typeFail(_ name: String) -> (String) -> Error { { GraphError.invalidTopology("tensor '\(name)': \($0)") } }
        // Recorded types may have unknown dimensions (−1, `TensorType.unknown`: resolved at
        // prediction time); every known one is bounded as the IR bounds it.
        for i in inputs {
            guard i.type.rank <= GraphLimits.maxRank else { throw GraphError.invalidTopology("input '\(i.name)' has rank \(i.type.rank)") }
            try checkRecorded(i.type, typeFail(i.name))
        }
        for (name, t) in tensorTypes {
            guard t.rank <= GraphLimits.maxRank else { throw GraphError.invalidTopology("tensor '\(name)' has rank \(t.rank)") }
            try checkRecorded(t, typeFail(name))
        }
        for node in nodes {
            for (key, w) in node.weights {
                try ConstantTensor.checkBundleLimits(shape: w.shape, encoding: w.encoding, what: "weight '\(key)' of node '\(node.name)'")
            }
            var ins: [TensorType] = []
            for name in node.inputs {
                guard let t = tensorTypes[name] else {
                    throw GraphError.invalidTopology(
                        "node '\(node.name)' (\(node.op.name)) reads tensor '\(name)', which has no recorded type (run inferShapes() before writing the bundle)")
                }
                ins.append(t)
            }
            let outs = try node.inferOutputTypes(ins)
            guard outs.count == node.outputs.count else {
                throw GraphError.invalidNode(node: node.name, op: node.op.name,
                    message: "produces \(outs.count) outputs, but \(node.outputs.count) output names are given")
            }
            for (name, t) in zip(node.outputs, outs) {
                guard let stored = tensorTypes[name] else {
                    throw GraphError.invalidTopology("tensor '\(name)' (output of node '\(node.name)') has no recorded type (run inferShapes() before writing the bundle)")
                }
                guard stored == t else {
                    throw GraphError.invalidTopology("tensor '\(name)' is recorded as \(stored) but its producer gives \(t)")
                }
            }
        }
    }
}
