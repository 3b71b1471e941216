// iOS 18 stateful programs: read_state, write_state, coreml_update_state. A state input is an
// IR input holding the state's value before the prediction; the value after it (the last write)
// is an extra graph output, named in the graph's metadata (`MILStates.metadataPrefix` + state).
// `MLRuntime.StatefulModel` feeds the outputs back as the next prediction's inputs, which keeps a
// state across the predictions of one loaded model (and `resetStates()` zeroes them).
import MLGraph

/// Where an imported graph records its states.
public enum MILStates {
    /// Metadata key prefix: `userDefined["mlconv.state.<name>"]` = the output holding the state's
    /// next value; the graph input `<name>` holds its current value.
    public static let metadataPrefix = "mlconv.state."

    /// (state input, next-value output) pairs recorded in `graph`'s metadata, sorted by name.
    public static func states(of graph: Graph) -> [(input: String, output: String)] {
        graph.description.metadata.userDefined.compactMap { k, v in
            k.hasPrefix(metadataPrefix) ? (String(k.dropFirst(metadataPrefix.count)), v) : nil
        }.sorted { $0.input < $1.input }
    }
}

extension MILGraphImporter {
    func importState(_ name: String, _ t: MILTensorType) throws {
        guard let shape = t.shape, shape.allSatisfy({ $0 > 0 }), let elem = t.irElementType else {
            throw LayerImportFailure("is a state without a static tensor type")
        }
        b.inputs.append(ValueInfo(name: name, type: TensorType(shape, elem)))
        b.types[name] = TensorType(shape, elem)
        stateNames.append(name)
        stateValues[name] = name
        values[name] = .tensor(name)
    }

    /// The output tensor holding state `name`'s value after the program.
    func stateOutput(_ name: String) throws -> String {
        guard let v = stateValues[name] else { throw LayerImportFailure("has no value") }
        let out = name + "__next"
        return try b.emit(out, .identity, [v], output: out)
    }

    /// The state a `state` / `input` argument names.
    func stateName(_ c: MILOpContext, _ param: String) throws -> String {
        guard case let .name(n)? = c.op.inputs[param]?.arguments.first?.binding, stateNames.contains(n) else {
            throw LayerImportFailure("needs \(param) to be a state input of the function")
        }
        guard outerFrames.isEmpty else {
            throw LayerImportFailure("uses state '\(n)' inside a control-flow block, which mlconv does not support")
        }
        return n
    }
}

enum MILStateOps {
    static var mappers: [String: MILOpMapper] {
        [
            "read_state": { c in
                let s = try c.importer.stateName(c, "input")
                return [.tensor(c.importer.stateValues[s] ?? s)]
            },
            "write_state": { c in
                let s = try c.importer.stateName(c, "input")
                c.importer.stateValues[s] = try c.tensor("data")
                return []
            },
            "coreml_update_state": { c in
                let s = try c.importer.stateName(c, "state")
                let v = try c.tensor("value")
                c.importer.stateValues[s] = v
                return [.tensor(v)]
            },
        ]
    }
}
