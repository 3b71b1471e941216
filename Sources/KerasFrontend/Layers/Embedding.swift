import MLGraph

/// `Embedding(input_dim, output_dim, mask_zero)` on indices [N, L] → embedding `<name>`
/// [N, L, output_dim]. Float indices (Keras' default `Input` dtype) are first cast to int32 by a
/// `cast` node `<name>__indices` (truncation toward zero), as Keras' Embedding casts them; int32 /
/// int64 indices feed the embedding directly. Keras weight
/// `embeddings` (input_dim, output_dim) → IR weight [output_dim, input_dim] (Core ML layout).
/// `mask_zero=True`: the output carries the mask `sequenceMask(value: 0)` of the indices to the
/// layers downstream (the node is emitted by the first consumer that needs it; see
/// `Masking.swift` for the propagation rules). Indices of rank ≠ 2 and LoRA-adapted embeddings
/// are rejected.
struct EmbeddingConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.embedding, .cast] }
    var classNames: [String] { ["Embedding"] }

    func weightRoles(_ layer: KerasLayerConfig, version: KerasVersion) -> [String] { ["embeddings"] }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        guard ctx.inputShape.count == 2 else {
            throw ctx.unsupported("expects indices of shape [batch, length], found \(formatShape(ctx.inputShape))",
                                  hint: "reshape the indices to [batch, length] before the Embedding")
        }
        if let r = ctx.value("lora_rank"), r.int != nil {
            throw ctx.unsupported("LoRA-adapted embeddings (lora_rank \(r)) are not supported",
                                  hint: "merge the LoRA weights into the embeddings (`layer.disable_lora()` after `enable_lora`) and re-save")
        }
        let vocab = try ctx.int("input_dim"), dim = try ctx.int("output_dim")
        let w = try ctx.constant("weight", shape: [dim, vocab]) {
            WeightLayout.denseKernel(try ctx.weight("embeddings", shape: [vocab, dim]), kerasShape: [vocab, dim])
        }
        if try ctx.bool("mask_zero", default: false) {
            ctx.maskTable.attach(KerasSequenceMask(source: ctx.inputs[0], value: 0, steps: ctx.inputShape[1]), to: ctx.outputNames[0])
        }
        var nodes: [Node] = []
        var indices = ctx.inputs[0]
        if ctx.inputTypes[0].elementType != .int32 && ctx.inputTypes[0].elementType != .int64 {
            let name = ctx.nodeName + "__indices"
            nodes.append(Node(name: name, op: .cast(to: .int32), inputs: [indices], outputs: [name]))
            indices = name
        }
        nodes.append(Node(name: ctx.nodeName, op: .embedding(outputChannels: dim), inputs: [indices], outputs: [ctx.outputNames[0]],
                          weights: ["weight": w]))
        return nodes
    }
}
