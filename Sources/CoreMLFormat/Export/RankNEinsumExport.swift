// MARK: rank-N export (issue 10) — einsum as transposes, reshapes, reduceSum and batchedMatmul.
// Core ML NeuralNetwork has no einsum layer; a one- or two-operand equation without repeated
// labels inside an operand is a batched matrix product once its labels are grouped:
// batch (both operands and the output), contracted (both operands, not the output) and free
// (one operand and the output). Labels of one operand missing from the output are summed first.
import MLGraph

extension ExportWriter {
    mutating func lowerEinsumND(_ node: Node, equation: String, _ ins: [TensorType], _ inB: [String], _ outType: TensorType, _ out: String) {
        guard case let .success(e) = EinsumEquation.parse(equation), e.operands.count == ins.count else {
            return fail(node, "einsum equation '\(equation)' does not parse", "Fix the equation.")
        }
        if let k = e.operands.firstIndex(where: { Set($0).count != $0.count }) {
            return fail(node, "einsum '\(equation)' repeats a label in operand \(k) (a diagonal), which batchedMatmul cannot express",
                        "Take the diagonal with gather nodes first, or run the model with mlconv.")
        }
        var size = [Int](repeating: 1, count: e.labelCount)
        var actual: [[Int: Int]] = [[:], [:]]  // each operand's own size of each of its labels
        for (k, labels) in e.operands.enumerated() {
            for (i, l) in labels.enumerated() {
                let d = ins[k].shape[i]
                actual[k][l] = d
                if size[l] != 1, d != 1, size[l] != d {
                    return fail(node, "einsum '\(equation)' gives label \(l) sizes \(size[l]) and \(d)", "Use equal sizes.")
                }
                size[l] = max(size[l], d)
            }
        }
        let outSet = Set(e.output)
        // Sum the labels only one operand has and the output lacks.
        var operands = Array(zip(e.operands, inB))
        for k in operands.indices {
            let others = Set(operands.enumerated().filter { $0.offset != k }.flatMap { $0.element.0 })
            let summed = operands[k].0.enumerated().filter { !outSet.contains($0.element) && !others.contains($0.element) }.map(\.offset)
            guard !summed.isEmpty else { continue }
            if summed.count == operands[k].0.count {
                return fail(node, "einsum '\(equation)' sums every axis of operand \(k) (a rank-0 intermediate)", "Keep an axis.")
            }
            let b = stepND(node, "sum\(k)", [operands[k].1], .reduceSum(Spec.ReduceSumLayerParams(axes: summed.map(Int64.init), keepDims: false)))
            operands[k] = (operands[k].0.enumerated().filter { !summed.contains($0.offset) }.map(\.element), b)
        }
        func permute(_ labels: [Int], to order: [Int], _ b: String, _ what: String) -> String {
            guard labels != order else { return b }
            return stepND(node, what, [b], Self.transposeND(order.map { l in labels.firstIndex(of: l) ?? 0 }))
        }
        func reshape(_ b: String, from current: [Int], to shape: [Int], _ what: String) -> String {
            guard current != shape else { return b }
            return stepND(node, what, [b], Self.reshapeND(shape))
        }
        if operands.count == 1 {
            let (labels, b) = operands[0]
            if labels == e.output { return emit(node.name, [b], [out], Self.act(.linear(alpha: 1, beta: 0))) }
            return emitND(node.name, [b], [out], Self.transposeND(e.output.map { l in labels.firstIndex(of: l) ?? 0 }), node: node)
        }
        let (a, ab) = operands[0], (c, cb) = operands[1]
        let batch = e.output.filter { a.contains($0) && c.contains($0) }
        let contracted = a.filter { c.contains($0) && !outSet.contains($0) }
        let aFree = a.filter { !c.contains($0) }, cFree = c.filter { !a.contains($0) }
        let m = aFree.map { size[$0] }.reduce(1, *), k = contracted.map { size[$0] }.reduce(1, *), n = cFree.map { size[$0] }.reduce(1, *)
        let batchDims = batch.map { size[$0] }
        guard (contracted + aFree).allSatisfy({ actual[0][$0] == size[$0] }), (contracted + cFree).allSatisfy({ actual[1][$0] == size[$0] }) else {
            return fail(node, "einsum '\(equation)' broadcasts a contracted or free axis", "Broadcast batch axes only, or tile the operand first.")
        }
        guard batchDims.count + 2 <= 5, batchDims.count + aFree.count + cFree.count <= 5 else {
            return fail(node, "einsum '\(equation)' needs tensors of rank above 5 when written as a batched matrix product", "Merge axes first.")
        }
        let aOrder = batch + aFree + contracted, cOrder = batch + contracted + cFree
        let a2 = reshape(permute(a, to: aOrder, ab, "x_t"), from: aOrder.map { actual[0][$0] ?? 1 }, to: batch.map { actual[0][$0] ?? 1 } + [m, k], "x_mk")
        let c2 = reshape(permute(c, to: cOrder, cb, "y_t"), from: cOrder.map { actual[1][$0] ?? 1 }, to: batch.map { actual[1][$0] ?? 1 } + [k, n], "y_kn")
        let grouped = batch + aFree + cFree
        let mm = grouped == e.output && grouped.count == batchDims.count + 2 && aFree.count == 1 && cFree.count == 1 ? out : tempBlob("\(out)__matmul")
        emitND(mm == out ? node.name : freshLayerName("\(node.name)__matmul"), [a2, c2], [mm],
               .batchedMatmul(Spec.BatchedMatMulLayerParams()), node: node)
        guard mm != out else { return }
        let expanded = reshape(mm, from: batchDims + [m, n], to: batchDims + aFree.map { size[$0] } + cFree.map { size[$0] }, "split")
        if grouped == e.output {
            emit(node.name, [expanded], [out], Self.act(.linear(alpha: 1, beta: 0)))
        } else {
            emitND(node.name, [expanded], [out], Self.transposeND(e.output.map { l in grouped.firstIndex(of: l) ?? 0 }), node: node)
        }
    }
}
