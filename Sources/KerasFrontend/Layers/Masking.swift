import Foundation
import MLGraph

// Keras sequence masks.
//
// Keras attaches a boolean mask [N, T] to a tensor (`Masking`, `Embedding(mask_zero=True)`)
// and passes it along from layer to layer; recurrent layers skip the masked steps. The IR has
// no mask metadata on tensors: masks are ordinary [N, T] tensors (`.sequenceMask(value:)`,
// 1 = keep the step) fed to the ops that use them (`.recurrent` with `hasMask`, `.applyMask`).
// The converters track, per conversion, which IR tensor carries which mask
// (`KerasMaskTable`), following Keras' propagation rules:
//
// * `Masking(mask_value)` on [N, T, C]: mask = any(x[n, t, :] ≠ mask_value); its output is
//   x·mask (`.applyMask`) and carries the mask.
// * `Embedding(mask_zero=True)` on [N, L]: mask = (index ≠ 0); its output carries the mask (the
//   `.sequenceMask` node is only emitted when a consumer needs it).
// * Layers whose output is their input (Dropout, SpatialDropout1D, GaussianNoise,
//   GaussianDropout, AlphaDropout, ActivityRegularization) keep the mask (same IR tensor).
// * Pass-through layers (Keras `supports_masking = True` without using the mask): Dense,
//   Activation, ReLU, LeakyReLU, PReLU, ELU, ThresholdedReLU, BatchNormalization, and
//   Rescaling in Keras 3 only (tf.keras' Rescaling drops masks) — registered wrapped in
//   `MaskPropagating`.
// * TimeDistributed: output mask = input mask.
// * Merge layers (Add, Subtract, Multiply, Average, Maximum, Minimum, Concatenate off the
//   time axis): tf.keras — AND of the masks of the masked inputs; Keras 3 — OR of the masks,
//   none when an input is unmasked. Concatenate along the time axis with a masked input is
//   rejected.
// * SimpleRNN / LSTM / GRU / Bidirectional: use the mask (state kept and output repeated at
//   masked steps; a Bidirectional sequence or `zero_output_for_mask=True` zeroes them); the
//   output sequence (`return_sequences`) carries the mask on, final outputs and states do not.
// * Every other layer drops the mask (Keras' default for layers without `supports_masking`:
//   Conv1D, pooling, padding, cropping, UpSampling1D, Reshape, Flatten, Permute, RepeatVector, …).
// * Rejected (Keras uses the mask in a way the IR cannot express): GlobalAveragePooling1D (masked
//   mean) and Softmax layers reading a masked tensor.
//
// Keras 3 writes the masks into the `.h5` config explicitly: its functional graph records the
// mask computation as op layers (`NotEqual(x, value)`, then `Any(axis=-1)` for Masking) whose
// outputs are passed to the consumers' `mask` argument (an extra inbound tensor). These op
// layers convert to real nodes (`KerasMaskOpConverter`), and a consumer reading such a tensor
// uses the mask of the Masking / Embedding layer built on the same source tensor. When a
// consumer gets no explicit mask, the propagated one (rules above) applies (Keras 3 Sequential
// models and tf.keras files record no masks). A mask combined by a merge layer is written by
// Keras 3 as further op layers (ExpandDims, ZerosLike, LogicalOr, Concatenate, Any) that have no
// converter: such files are rejected with those layers listed.

/// A Keras sequence mask [N, T] attached to IR tensors during one conversion: the mask
/// `sequenceMask(value:)` of `source`, or an already computed IR tensor.
final class KerasSequenceMask {
    /// The IR tensor the mask is computed from ("" for a mask that only exists as `tensor`).
    let source: String
    /// The value that marks a masked step (`Masking.mask_value`; 0 for Embedding).
    let value: Float
    /// Number of time steps T.
    let steps: Int
    /// The IR tensor holding the mask [N, T], once a node computes it.
    var tensor: String?

    /// A mask computed from `source` with `value`, or held by `tensor`.
    init(source: String, value: Float, steps: Int, tensor: String? = nil) {
        self.source = source; self.value = value; self.steps = steps; self.tensor = tensor
    }
}

/// An output of a Keras 3 mask op layer (`NotEqual` / `Any`).
struct KerasMaskOpReference {
    /// The tensor the op chain started from (the input of the Masking / Embedding layer).
    var source: String
    /// Whether the op output is [N, T] and equals `sequenceMask(value: 0)` of `source`.
    var isStepMask: Bool
}

/// Masks known in one conversion (see the comment at the top of this file for the rules).
final class KerasMaskTable {
    /// IR tensor → the mask Keras attaches to it.
    var maskOf: [String: KerasSequenceMask] = [:]
    /// IR tensor read by a Masking or mask_zero Embedding layer → the masks built from it.
    var builtFrom: [String: [KerasSequenceMask]] = [:]
    /// Outputs of Keras 3 mask op layers.
    var opReferences: [String: KerasMaskOpReference] = [:]

    private final class WeakCache { weak var cache: ConstantCache?; init(_ c: ConstantCache) { cache = c } }
    private static let lock = NSLock()
    nonisolated(unsafe) private static var tables: [ObjectIdentifier: (owner: WeakCache, table: KerasMaskTable)] = [:]

    /// The table of the conversion that owns `cache` (one `ConstantCache` per conversion); tables
    /// of finished conversions are dropped.
    static func table(for cache: ConstantCache) -> KerasMaskTable {
        lock.lock(); defer { lock.unlock() }
        let id = ObjectIdentifier(cache)
        if let e = tables[id], e.owner.cache === cache { return e.table }
        tables = tables.filter { $0.value.owner.cache != nil }
        let t = KerasMaskTable()
        tables[id] = (WeakCache(cache), t)
        return t
    }

    /// Records a mask built from `source` and attached to `tensor`.
    func attach(_ mask: KerasSequenceMask, to tensor: String) {
        maskOf[tensor] = mask
        if !mask.source.isEmpty {
            builtFrom[mask.source, default: []].append(mask)
        }
    }
}

extension KerasLayerContext {
    /// The mask bookkeeping of this conversion.
    var maskTable: KerasMaskTable { KerasMaskTable.table(for: constantCache) }

    /// Whether input `i` is the output of a Keras 3 mask op layer (an explicit `mask` argument).
    func isMaskOperand(_ i: Int) -> Bool { i < inputs.count && maskTable.opReferences[inputs[i]] != nil }

    /// The mask of the layer's main input: the explicit Keras 3 `mask` argument (input `explicit`)
    /// when given, else the mask propagated to input 0; nil when unmasked.
    /// - Throws: `unsupportedConfiguration` when an explicit mask cannot be traced to its Masking /
    ///   Embedding layer, or when the mask's step count differs from the input's.
    func inputMask(explicit: Int? = nil) throws -> KerasSequenceMask? {
        let table = maskTable
        var mask: KerasSequenceMask?
        if let e = explicit, e < inputs.count {
            let name = inputs[e]
            guard let ref = table.opReferences[name] else {
                throw unsupported("input \(e) ('\(name)') is not a mask this converter can trace",
                                  hint: "pass the mask through a Masking or Embedding(mask_zero=True) layer")
            }
            let built = table.builtFrom[ref.source] ?? []
            let values = Set(built.map(\.value))
            if let first = built.first, values.count == 1 {
                mask = first
                if first.tensor == nil, first.value == 0, ref.isStepMask, e < inputTypes.count, inputTypes[e].rank == 2 {
                    first.tensor = name  // the Keras 3 op output already is this mask
                }
            } else if built.isEmpty, ref.isStepMask, e < inputTypes.count, inputTypes[e].rank == 2 {
                // A mask op chain on a tensor no Masking / Embedding layer reads: take it as is
                // (its NotEqual compared with 0, see `KerasMaskOpConverter`).
                mask = KerasSequenceMask(source: "", value: 0, steps: inputTypes[e].shape[1], tensor: name)
            } else {
                throw unsupported("the mask '\(name)' comes from tensor '\(ref.source)', which \(built.isEmpty ? "no Masking or Embedding layer reads" : "several Masking layers with different mask values read")",
                                  hint: "compute the mask with one Masking or Embedding(mask_zero=True) layer")
            }
        } else {
            mask = inputs.first.flatMap { table.maskOf[$0] }
        }
        if let m = mask, inputShape.count >= 2, inputShape[1] != m.steps {
            throw unsupported("the Keras mask has \(m.steps) time steps but the input \(formatShape(inputShape)) has \(inputShape[1])",
                              hint: "masks only propagate through layers that keep the time axis")
        }
        return mask
    }

    /// The IR tensor of `mask`, with the node computing it (`<node>__mask`) when no node does
    /// yet; the mask then records that tensor for later consumers.
    func materialize(_ mask: KerasSequenceMask) -> (tensor: String, nodes: [Node]) {
        if let t = mask.tensor { return (t, []) }
        let name = nodeName + "__mask"
        mask.tensor = name
        return (name, [Node(name: name, op: .sequenceMask(value: mask.value), inputs: [mask.source], outputs: [name])])
    }
}

/// How a wrapped built-in converter treats a masked input (`MaskPropagating`).
enum KerasMaskRule {
    /// Output 0 carries the mask of input 0 (Keras `supports_masking` without using it).
    case passThrough
    /// `passThrough` for Keras 3 files only (the layer drops masks in tf.keras).
    case passThroughInKeras3
    /// Merge layers: the output carries the inputs' masks combined as the file's Keras version
    /// does (tf.keras: AND of the masked inputs' masks; Keras 3: OR, none if an input is unmasked).
    case merge
    /// Keras would use the mask in a way the IR cannot express: a masked input is rejected.
    case reject(String)
}

/// Wraps a built-in converter of a layer that lets Keras masks through (see the rules at the top
/// of `Masking.swift`): converts with the wrapped converter (explicit Keras 3 mask operands
/// removed from the inputs) and records the output's mask.
struct MaskPropagating: KerasLayerConverter {
    var ops: Set<OpKind> { base.ops.union([.sequenceMask, .elementwise, .applyMask]) }
    var listedOps: Set<OpKind> { base.listedOps }
    var minimumInputCount: Int { base.minimumInputCount }
    /// The wrapped converter.
    let base: any KerasLayerConverter
    /// What a masked input does.
    let rule: KerasMaskRule

    /// Wraps `base` with `rule` (default: the output carries the input's mask).
    init(_ base: any KerasLayerConverter, _ rule: KerasMaskRule = .passThrough) { self.base = base; self.rule = rule }

    /// The wrapped converter's class names.
    var classNames: [String] { base.classNames }

    /// The wrapped converter's weight roles.
    func weightRoles(_ layer: KerasLayerConfig, version: KerasVersion) -> [String] { base.weightRoles(layer, version: version) }

    /// Converts with the wrapped converter and records the output's mask.
    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        let table = ctx.maskTable
        let operands = ctx.inputs.indices.filter(ctx.isMaskOperand)
        let inner = operands.isEmpty ? ctx : ctx.replacingInputs(ctx.inputs.indices.filter { !operands.contains($0) })
        switch rule {
        case .passThrough, .passThroughInKeras3:
            if case .passThroughInKeras3 = rule, !ctx.kerasVersion.isKeras3 { return try base.convert(inner) }
            let mask: KerasSequenceMask?
            if let e = operands.first { mask = try ctx.inputMask(explicit: e) } else { mask = try inner.inputMask() }
            let nodes = try base.convert(inner)
            if let mask, !nodes.isEmpty { table.maskOf[ctx.outputNames[0]] = mask }
            return nodes
        case let .reject(why):
            let mask: KerasSequenceMask?
            if let e = operands.first { mask = try ctx.inputMask(explicit: e) } else { mask = inner.inputs.compactMap { table.maskOf[$0] }.first }
            if mask != nil {
                throw ctx.unsupported("its input carries a Keras mask, which \(why)",
                                      hint: "remove the Masking / mask_zero before this layer, or convert it with a `LayerHook`")
            }
            return try base.convert(inner)
        case .merge:
            var masks: [KerasSequenceMask] = []
            if operands.isEmpty {
                masks = inner.inputs.compactMap { table.maskOf[$0] }
                // Keras 3: an unmasked input makes the output unmasked (Merge: None; Concatenate:
                // all-ones mask OR the others).
                if ctx.kerasVersion.isKeras3, masks.count < inner.inputs.count { masks = [] }
            } else {
                for i in operands { if let m = try ctx.inputMask(explicit: i) { masks.append(m) } }
            }
            let nodes = try base.convert(inner)
            guard let first = masks.first else { return nodes }
            if ctx.className == "Concatenate" {
                let rank = inner.inputShape.count
                let a = try inner.int("axis", default: -1)
                if (a < 0 ? a + rank : a) == 1 {
                    throw ctx.unsupported("it concatenates masked sequences along the time axis",
                                          hint: "concatenate along the feature axis, or remove the mask")
                }
            }
            guard masks.allSatisfy({ $0.steps == first.steps }) else {
                throw ctx.unsupported("its inputs carry masks of different lengths", hint: "check the model")
            }
            var unique: [KerasSequenceMask] = []
            for m in masks where !unique.contains(where: { $0 === m }) { unique.append(m) }
            if unique.count == 1 {
                table.maskOf[ctx.outputNames[0]] = first
                return nodes
            }
            var extra: [Node] = [], tensors: [String] = []
            for (k, m) in unique.enumerated() {
                if let t = m.tensor { tensors.append(t); continue }
                let name = ctx.nodeName + "__mask\(k)"
                extra.append(Node(name: name, op: .sequenceMask(value: m.value), inputs: [m.source], outputs: [name]))
                tensors.append(name)
            }
            // tf.keras: AND of the masks (minimum of 0/1 values); Keras 3: OR (maximum).
            let combined = ctx.nodeName + "__mask"
            extra.append(Node(name: combined, op: .elementwise(ctx.kerasVersion.isKeras3 ? .maximum : .minimum), inputs: tensors, outputs: [combined]))
            table.maskOf[ctx.outputNames[0]] = KerasSequenceMask(source: "", value: 0, steps: first.steps, tensor: combined)
            return extra + nodes
        }
    }
}

extension KerasLayerContext {
    /// The same call reading only the inputs at `keep` (used to hide explicit mask operands).
    func replacingInputs(_ keep: [Int]) -> KerasLayerContext {
        var c = KerasLayerContext(
            layer: layer, scope: scope, callIndex: callIndex, nodeName: nodeName,
            inputs: keep.map { inputs[$0] }, inputTypes: keep.map { inputTypes[$0] }, outputNames: outputNames,
            kerasVersion: kerasVersion, backend: backend, file: file, storedWeights: storedWeights, weightRoles: weightRoles,
            readWeight: readWeight, constantCache: constantCache)
        c.recordedInputShapes = recordedInputShapes.isEmpty ? [] : keep.filter { $0 < recordedInputShapes.count }.map { recordedInputShapes[$0] }
        c.recordedOutputShapes = recordedOutputShapes
        return c
    }
}

/// `Masking(mask_value)` on [N, T, C] → `.sequenceMask(value: mask_value)` (`<name>__mask`,
/// [N, T]: 1 where any feature of the step differs from mask_value) and `.applyMask` (the
/// layer's output x·mask). The output carries the mask to downstream layers (see the rules at
/// the top of this file). Inputs of another rank are rejected (Keras would mask along every axis
/// but the last, which no recurrent layer reads).
struct MaskingConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.applyMask, .sequenceMask] }
    var classNames: [String] { ["Masking"] }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        guard ctx.inputShape.count == 3 else {
            throw ctx.unsupported("expects a [batch, steps, features] input, found \(formatShape(ctx.inputShape))",
                                  hint: "apply Masking to a sequence of feature vectors")
        }
        let value = try ctx.float("mask_value", default: 0)
        let maskName = ctx.nodeName + "__mask"
        let mask = KerasSequenceMask(source: ctx.inputs[0], value: value, steps: ctx.inputShape[1], tensor: maskName)
        ctx.maskTable.attach(mask, to: ctx.outputNames[0])
        return [Node(name: maskName, op: .sequenceMask(value: value), inputs: [ctx.inputs[0]], outputs: [maskName]),
                Node(name: ctx.nodeName, op: .applyMask, inputs: [ctx.inputs[0], maskName], outputs: [ctx.outputNames[0]])]
    }
}

/// Keras 3's mask op layers, which its `.h5` writer records for the masks of a functional
/// model (see the top of this file):
/// * `NotEqual(x, value)` → elementwise x ≠ 0 as 0/1: `.sequenceMask(value: 0)` on [N, L];
///   on higher ranks reshaped to [N, ∏rest] and back. The config we read does not keep the
///   compared scalar: the node compares with 0 (Embedding's value and Masking's default). Mask
///   consumers do not rely on it: they use the mask of the Masking layer reading the same tensor,
///   with its real mask_value.
/// * `Any(axis=-1)` on [N, T, C] → `.sequenceMask(value: 0)` (any element of the step non-zero).
/// Other forms (two tensors compared, other axes, keepdims) are rejected.
struct KerasMaskOpConverter: KerasLayerConverter {
    var ops: Set<OpKind> { [.reshape, .sequenceMask] }
    var classNames: [String] { ["NotEqual", "Any"] }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        let table = ctx.maskTable
        let x = ctx.inputs[0], shape = ctx.inputShape, out = ctx.outputNames[0]
        if ctx.className == "NotEqual" {
            guard ctx.inputs.count == 1 else {
                throw ctx.unsupported("compares two tensors; only the comparison with a scalar that Keras 3 writes for masks is supported",
                                      hint: "convert this op with a `LayerHook`")
            }
            guard shape.count >= 2 else { throw ctx.unsupported("expects an input of rank ≥ 2, found \(formatShape(shape))", hint: "check the model") }
            let ref = KerasMaskOpReference(source: table.opReferences[x]?.source ?? x, isStepMask: shape.count == 2)
            table.opReferences[out] = ref
            if shape.count == 2 {
                return [Node(name: ctx.nodeName, op: .sequenceMask(value: 0), inputs: [x], outputs: [out])]
            }
            let flat = ctx.nodeName + "__flat", flatMask = ctx.nodeName + "__flat_mask"
            return [Node(name: flat, op: .reshape(targetShape: [shape.dropFirst().reduce(1, *)]), inputs: [x], outputs: [flat]),
                    Node(name: ctx.nodeName, op: .sequenceMask(value: 0), inputs: [flat], outputs: [flatMask]),
                    Node(name: ctx.nodeName + "__unflatten", op: .reshape(targetShape: Array(shape.dropFirst())), inputs: [flatMask], outputs: [out])]
        }
        let axis = try ctx.axis(try ctx.int("axis", default: -1), rank: max(shape.count, 1))
        guard shape.count == 3, axis == 2, try !ctx.bool("keepdims", default: false), ctx.inputs.count == 1 else {
            throw ctx.unsupported("only Any(axis=-1) over a [batch, steps, features] tensor (Keras 3's Masking mask) is supported",
                                  hint: "convert this op with a `LayerHook`")
        }
        let upstream = table.opReferences[x]
        table.opReferences[out] = KerasMaskOpReference(source: upstream?.source ?? x, isStepMask: true)
        return [Node(name: ctx.nodeName, op: .sequenceMask(value: 0), inputs: [x], outputs: [out])]
    }
}
