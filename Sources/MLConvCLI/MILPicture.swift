// `mlconv inspect --graph` for ML programs: the MIL program's functions as op graphs
// (`ModelPicture.programReader`). `const` ops are not drawn; an op reading constants stored in the
// weight file is labelled with their precision.
import CoreMLFormat
import Foundation

enum MILPicture {
    /// The functions of `model`'s ML program as pictures; nil for other models.
    @Sendable static func functions(_ model: Spec.Model, _ url: URL) throws -> [ModelPicture.Function]? {
        guard let program = try model.mlProgram(file: url.lastPathComponent) else { return nil }
        return program.functions.keys.sorted().compactMap { name in
            guard let f = program.functions[name], let b = f.blockSpecializations[f.opset] else { return nil }
            let inputs = f.inputs.map { ($0.name, Optional(MILTextFormatting.type($0.type))) }
            return ModelPicture.Function(name: name, opset: f.opset, block: block(b, inputs: inputs))
        }
    }

    static func block(_ b: Spec.MILSpec.Block, inputs: [(name: String, type: String?)]) -> BlockPicture {
        var constTypes: [String: String] = [:]
        var consts = Set<String>()
        var ops: [BlockPicture.Op] = []
        for op in b.operations {
            if op.type == "const" {
                if let o = op.outputs.first { consts.insert(o.name) }
                if let o = op.outputs.first, case .blobFileValue? = op.attributes["val"]?.value,
                   case let .tensorType(t)? = o.type?.type {
                    constTypes[o.name] = "\(t.dataType)".lowercased()
                }
                continue
            }
            var reads: [String] = []
            var precisions = Set<String>()
            for key in op.inputs.keys.sorted() {
                for binding in op.inputs[key]?.arguments ?? [] {
                    guard case let .name(n)? = binding.binding else { continue }
                    if let p = constTypes[n] { precisions.insert(p) } else if !consts.contains(n) { reads.append(n) }
                }
            }
            let nested = op.blocks.enumerated().map { i, nb -> (label: String, block: BlockPicture) in
                let label = op.type == "while_loop" ? (i == 0 ? "cond" : "body") : op.type == "cond" ? (i == 0 ? "then" : "else") : "block \(i)"
                return (label, block(nb, inputs: nb.inputs.map { ($0.name, Optional(MILTextFormatting.type($0.type))) }))
            }
            ops.append(BlockPicture.Op(name: op.outputs.first?.name ?? "", type: op.type, inputs: reads,
                                       outputs: op.outputs.map { ($0.name, Optional(MILTextFormatting.type($0.type))) },
                                       weightPrecision: precisions.isEmpty ? nil : precisions.sorted().joined(separator: ", "),
                                       blocks: nested))
        }
        return BlockPicture(inputs: inputs, ops: ops, outputs: b.outputs)
    }
}

/// MIL type text for pictures ("fp16[1×64×240×320]").
enum MILTextFormatting {
    static func type(_ v: Spec.MILSpec.ValueType?) -> String {
        guard case let .tensorType(t)? = v?.type else { return "?" }
        let dims = t.dimensions.map { d -> String in
            if case let .constant(c)? = d.dimension { return "\(c.size)" }
            return "?"
        }
        return "\(t.dataType)".lowercased() + "[" + dims.joined(separator: "×") + "]"
    }
}
