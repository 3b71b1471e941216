// flatten / reshape, transpose, identity and constant padding: values move, gradients move back.
import MLGraph

/// reshape (Core ML flatten and the importer's layout changes): [N] + targetShape, row-major;
/// dL/dx is dL/dy with the input's shape.
enum ReshapeRule: LayerRule {
    static func forward(_ node: Node, inputs: [TrainTensor], weights: [String: [Float]]) throws -> TrainTensor {
        let x = try node.checkedSingleInput(inputs)
        guard case let .reshape(target) = node.op else { throw RuleFailure("is not a reshape node") }
        var shape = [x.batch] + target
        if let u = shape.firstIndex(of: -1) {
            let known = shape.enumerated().filter { $0.offset != u }.map(\.element).reduce(1, *)
            guard known > 0 else { throw RuleFailure("cannot infer the -1 dimension of \(target)") }
            shape[u] = x.count / known
        }
        guard shape.reduce(1, *) == x.count else { throw RuleFailure("cannot reshape \(x.shape) to \(shape)") }
        return TrainTensor(shape: shape, values: x.values)
    }
    static func backward(_ node: Node, inputs: [TrainTensor], output: TrainTensor, gradOutput gy: TrainTensor,
                         weights: [String: [Float]], needInputs: [Bool], needWeights: Bool) throws -> Gradients {
        let x = try node.checkedSingleInput(inputs)
        return Gradients(inputs: [needInputs.first == true ? TrainTensor(shape: x.shape, values: gy.values) : nil])
    }
}

/// transpose: output axis i = input axis perm[i]; dL/dx applies the inverse permutation.
enum TransposeRule: LayerRule {
    static func permute(_ x: TrainTensor, _ perm: [Int]) throws -> TrainTensor {
        guard perm.count == x.shape.count, Set(perm) == Set(0..<perm.count) else {
            throw RuleFailure("perm \(perm) does not permute the axes of \(x.shape)")
        }
        let outShape = perm.map { x.shape[$0] }
        let inStrides = rowMajorStrides(x.shape)
        let outStrides = rowMajorStrides(outShape)
        var y = [Float](repeating: 0, count: x.count)
        for o in 0..<x.count {
            var rem = o, src = 0
            for a in 0..<outShape.count {
                let idx = rem / outStrides[a]
                rem -= idx * outStrides[a]
                src += idx * inStrides[perm[a]]
            }
            y[o] = x.values[src]
        }
        return TrainTensor(shape: outShape, values: y)
    }
    static func forward(_ node: Node, inputs: [TrainTensor], weights: [String: [Float]]) throws -> TrainTensor {
        guard case let .transpose(perm) = node.op else { throw RuleFailure("is not a transpose node") }
        return try permute(try node.checkedSingleInput(inputs), perm)
    }
    static func backward(_ node: Node, inputs: [TrainTensor], output: TrainTensor, gradOutput gy: TrainTensor,
                         weights: [String: [Float]], needInputs: [Bool], needWeights: Bool) throws -> Gradients {
        guard needInputs.first == true else { return Gradients(inputs: [nil]) }
        guard case let .transpose(perm) = node.op else { throw RuleFailure("is not a transpose node") }
        var inverse = [Int](repeating: 0, count: perm.count)
        for (i, p) in perm.enumerated() { inverse[p] = i }
        return Gradients(inputs: [try permute(gy, inverse)])
    }
}

/// identity: y = x, dL/dx = dL/dy.
enum IdentityRule: LayerRule {
    static func forward(_ node: Node, inputs: [TrainTensor], weights: [String: [Float]]) throws -> TrainTensor {
        try node.checkedSingleInput(inputs)
    }
    static func backward(_ node: Node, inputs: [TrainTensor], output: TrainTensor, gradOutput gy: TrainTensor,
                         weights: [String: [Float]], needInputs: [Bool], needWeights: Bool) throws -> Gradients {
        Gradients(inputs: [needInputs.first == true ? gy : nil])
    }
}

/// pad with a constant (the importer's padding for average pooling that counts padded zeros):
/// dL/dx is the interior of dL/dy.
enum PadRule: LayerRule {
    static func pads(_ node: Node, _ x: TrainTensor) throws -> [[Int]] {
        guard case let .pad(a) = node.op else { throw RuleFailure("is not a pad node") }
        guard a.mode == .constant else { throw RuleFailure("only constant padding has a backward rule, found \(a.mode)") }
        guard a.pads.count == x.shape.count, a.pads.allSatisfy({ $0.count == 2 && $0[0] >= 0 && $0[1] >= 0 }) else {
            throw RuleFailure("pads \(a.pads) do not fit the input shape \(x.shape)")
        }
        return a.pads
    }
    static func forward(_ node: Node, inputs: [TrainTensor], weights: [String: [Float]]) throws -> TrainTensor {
        let x = try node.checkedSingleInput(inputs)
        let p = try pads(node, x)
        guard case let .pad(a) = node.op else { throw RuleFailure("is not a pad node") }
        let outShape = zip(x.shape, p).map { $0 + $1[0] + $1[1] }
        var y = TrainTensor(shape: outShape, values: [Float](repeating: a.value, count: outShape.reduce(1, *)))
        copyInterior(x.shape, p, outShape) { i, o in y.values[o] = x.values[i] }
        return y
    }
    static func backward(_ node: Node, inputs: [TrainTensor], output: TrainTensor, gradOutput gy: TrainTensor,
                         weights: [String: [Float]], needInputs: [Bool], needWeights: Bool) throws -> Gradients {
        let x = try node.checkedSingleInput(inputs)
        guard needInputs.first == true else { return Gradients(inputs: [nil]) }
        let p = try pads(node, x)
        var gx = TrainTensor(zeros: x.shape)
        copyInterior(x.shape, p, gy.shape) { i, o in gx.values[i] = gy.values[o] }
        return Gradients(inputs: [gx])
    }
    /// Calls body(inputIndex, outputIndex) for every input element.
    static func copyInterior(_ inShape: [Int], _ p: [[Int]], _ outShape: [Int], _ body: (Int, Int) -> Void) {
        let inStrides = rowMajorStrides(inShape), outStrides = rowMajorStrides(outShape)
        let total = inShape.reduce(1, *)
        for i in 0..<total {
            var rem = i, o = 0
            for a in 0..<inShape.count {
                let idx = rem / inStrides[a]
                rem -= idx * inStrides[a]
                o += (idx + p[a][0]) * outStrides[a]
            }
            body(i, o)
        }
    }
}
