// The recurrent part of a Core ML report: each recurrent layer with its sequence input and its
// state inputs and outputs (Core ML's optional `<layer>_h_in` / `_c_in` / `…_rev` features or
// explicit state blobs such as a Create ML activity classifier's `stateIn` / `stateOut`).

enum RecurrentInspection {
    /// The state roles of a recurrent layer's extra inputs (and outputs), in Core ML's order.
    static func stateRoles(_ l: Spec.NeuralNetworkLayer.Layer) -> [String]? {
        switch l {
        case .uniDirectionalLSTM: return ["h", "c"]
        case .biDirectionalLSTM: return ["h", "c", "h (backward)", "c (backward)"]
        case .gru, .simpleRecurrent: return ["h"]
        default: return nil
        }
    }

    static func roleText(_ role: String, initial: Bool) -> String {
        let backward = role.hasSuffix("(backward)")
        let kind = role.hasPrefix("h") ? "hidden state h" : "cell state c"
        return (initial ? "initial " : "final ") + kind + (backward ? " (backward)" : "")
    }

    /// What each model feature is to the recurrent layers, by feature name: the sequence input of
    /// a recurrent or embedding layer (read directly, or through one permute that moves the steps
    /// onto the Seq axis), or an initial / final state. Empty for networks without recurrent layers.
    static func featureRoles(_ model: Spec.Model) -> [String: String] {
        guard let n = model.neuralNetwork, let d = model.description else { return [:] }
        let inputs = Set(d.input.map(\.name)), outputs = Set(d.output.map(\.name))
        var producer: [String: Spec.NeuralNetworkLayer] = [:]
        var consumers: [String: [Spec.NeuralNetworkLayer]] = [:]
        for l in n.layers {
            for o in l.output { producer[o] = l }
            for i in l.input { consumers[i, default: []].append(l) }
        }
        var roles: [String: String] = [:]
        func sequenceSource(_ blob: String) -> (feature: String, via: String?)? {
            if inputs.contains(blob) { return (blob, nil) }
            if let p = producer[blob], case let .permute(axis) = p.layer, axis.first != 0, let src = p.input.first, inputs.contains(src) {
                return (src, p.name)
            }
            return nil
        }
        for l in n.layers {
            let isEmbedding: Bool
            if case .embedding = l.layer { isEmbedding = true } else { isEmbedding = false }
            guard let states = stateRoles(l.layer) ?? (isEmbedding ? [] : nil) else { continue }
            if let x = l.input.first, let (f, via) = sequenceSource(x), roles[f] == nil {
                let what = isEmbedding ? "index sequence of embedding '\(l.name)'" : "sequence input of \(l.layer.typeName) '\(l.name)'"
                roles[f] = what + (via.map { " (steps moved onto the Seq axis by permute '\($0)')" } ?? " (steps on the Seq axis)")
            }
            for (i, blob) in l.input.dropFirst().enumerated() where i < states.count {
                if inputs.contains(blob) {
                    let optional = d.input.first { $0.name == blob }?.type?.isOptional ?? false
                    roles[blob] = "recurrent state: \(roleText(states[i], initial: true)) of '\(l.name)'"
                        + (optional ? ", zeros when absent" : "")
                } else if let p = producer[blob], case .slice = p.layer, let src = p.input.first, inputs.contains(src) {
                    // A packed state (e.g. Create ML's stateIn, sliced into h and c).
                    let part = "\(roleText(states[i], initial: true)) of '\(l.name)' (slice '\(p.name)')"
                    roles[src] = roles[src].map { $0 + ", " + part } ?? "packed recurrent state: " + part
                }
            }
            for (i, blob) in l.output.dropFirst().enumerated() where i < states.count {
                if outputs.contains(blob) {
                    roles[blob] = "recurrent state: \(roleText(states[i], initial: false)) of '\(l.name)'"
                } else if let c = consumers[blob]?.first(where: { if case .concat = $0.layer { return true } else { return false } }),
                          let o = c.output.first, outputs.contains(o) {
                    let part = "\(roleText(states[i], initial: false)) of '\(l.name)'"
                    roles[o] = roles[o].map { $0 + ", " + part } ?? "packed recurrent state (concat '\(c.name)'): " + part
                }
            }
        }
        return roles
    }

    /// JSON items and text lines for the recurrent layers of `n` (nothing when it has none).
    static func describe(_ n: Spec.NeuralNetwork, model: Spec.Model) -> (json: [[String: Any]], lines: [String]) {
        let d = model.description
        let inputs = d?.input ?? [], outputs = Set(d?.output.map(\.name) ?? [])
        var producer: [String: String] = [:]
        for l in n.layers { for o in l.output { producer[o] = l.name } }
        var items: [[String: Any]] = []
        var lines: [String] = []
        for l in n.layers {
            guard let states = stateRoles(l.layer) else { continue }
            var item: [String: Any] = ["name": l.name, "type": l.layer.typeName]
            var flags: [String] = []
            switch l.layer {
            case let .uniDirectionalLSTM(p):
                item["inputVectorSize"] = Checked.display(p.inputVectorSize); item["outputVectorSize"] = Checked.display(p.outputVectorSize)
                item["sequenceOutput"] = p.params?.sequenceOutput ?? false; item["reverseInput"] = p.reverseInput
                if p.params?.sequenceOutput ?? false { flags.append("sequence output") }
                if p.reverseInput { flags.append("reverse input") }
            case let .biDirectionalLSTM(p):
                item["inputVectorSize"] = Checked.display(p.inputVectorSize); item["outputVectorSize"] = Checked.display(p.outputVectorSize)
                item["sequenceOutput"] = p.params?.sequenceOutput ?? false
                flags.append("output 2×\(p.outputVectorSize) (forward ‖ backward)")
                if p.params?.sequenceOutput ?? false { flags.append("sequence output") }
            case let .gru(p):
                item["inputVectorSize"] = Checked.display(p.inputVectorSize); item["outputVectorSize"] = Checked.display(p.outputVectorSize)
                item["sequenceOutput"] = p.sequenceOutput; item["reverseInput"] = p.reverseInput
                if p.sequenceOutput { flags.append("sequence output") }
                if p.reverseInput { flags.append("reverse input") }
            case let .simpleRecurrent(p):
                item["inputVectorSize"] = Checked.display(p.inputVectorSize); item["outputVectorSize"] = Checked.display(p.outputVectorSize)
                item["sequenceOutput"] = p.sequenceOutput; item["reverseInput"] = p.reverseInput
                if p.sequenceOutput { flags.append("sequence output") }
                if p.reverseInput { flags.append("reverse input") }
            default: break
            }
            func source(_ blob: String) -> (text: String, json: [String: Any]) {
                if let f = inputs.first(where: { $0.name == blob }) {
                    let optional = f.type?.isOptional ?? false
                    return ("model input '\(blob)'" + (optional ? ", optional: zeros when absent" : ", required"),
                            ["blob": blob, "modelInput": true, "optional": optional])
                }
                return ("'\(blob)'" + (producer[blob].map { " from layer '\($0)'" } ?? ""), ["blob": blob, "modelInput": false])
            }
            var stateIn: [[String: Any]] = [], inText: [String] = []
            for (i, blob) in l.input.dropFirst().enumerated() where i < states.count {
                let s = source(blob)
                var j = s.json
                j["role"] = roleText(states[i], initial: true)
                stateIn.append(j)
                inText.append("\(states[i]) ← \(s.text)")
            }
            var stateOut: [[String: Any]] = [], outText: [String] = []
            for (i, blob) in l.output.dropFirst().enumerated() where i < states.count {
                stateOut.append(["role": roleText(states[i], initial: false), "blob": blob, "modelOutput": outputs.contains(blob)])
                outText.append("\(states[i]) → " + (outputs.contains(blob) ? "model output '\(blob)'" : "'\(blob)'"))
            }
            item["sequenceInput"] = l.input.first ?? ""
            item["stateInputs"] = stateIn
            item["stateOutputs"] = stateOut
            items.append(item)
            lines.append("    \(l.name): \(l.layer.typeName) \(NeuralNetworkInspection.summary(l))" + (flags.isEmpty ? "" : ", " + flags.joined(separator: ", ")))
            lines.append("      sequence in: '\(l.input.first ?? "")'")
            lines.append("      state in:    " + (inText.isEmpty ? "none (zeros)" : inText.joined(separator: "; ")))
            lines.append("      state out:   " + (outText.isEmpty ? "none" : outText.joined(separator: "; ")))
        }
        if !lines.isEmpty { lines.insert("  Recurrent layers:", at: 0) }
        return (items, lines)
    }
}
