import MLGraph

/// `Add`, `Subtract`, `Multiply`, `Average`, `Maximum`, `Minimum` → elementwise.
struct MergeConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.elementwise] }
    var classNames: [String] { ["Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum"] }
    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        let kind: ElementwiseKind
        switch ctx.className {
        case "Add": kind = .add
        case "Subtract": kind = .subtract
        case "Multiply": kind = .multiply
        case "Average": kind = .average
        case "Maximum": kind = .maximum
        default: kind = .minimum
        }
        if ctx.inputs.count == 1 { return [] }
        return [Node(name: ctx.nodeName, op: .elementwise(kind), inputs: ctx.inputs, outputs: [ctx.outputNames[0]])]
    }
}

/// `Concatenate(axis)` (default −1, negative counted from the input rank) → concat.
struct ConcatenateConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.concat] }
    var classNames: [String] { ["Concatenate"] }
    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        let axis = try ctx.axis(try ctx.int("axis", default: -1), rank: ctx.inputShape.count)
        if ctx.inputs.count == 1 { return [] }
        return [Node(name: ctx.nodeName, op: .concat(axis: axis), inputs: ctx.inputs, outputs: [ctx.outputNames[0]])]
    }
}
