// Classifier ML programs (issue 11): `mlconv keras … --class-labels FILE -o Model.mlpackage`.
//
// As coremltools' `_add_classify_op` (converters/mil/backend/mil/load.py) and the MIL `classify`
// definition (ops/defs/iOS15/classify.py): the probabilities tensor, cast to fp32 when the program
// computes in fp16, feeds a final `classify` op whose `classes` parameter is bound directly to an
// immediate list<str> value (no const op). Its two outputs — the predicted label (a str scalar) and
// the probability dictionary (dict<str, fp64>) — are the first two block outputs. The model
// description names them in `predictedFeatureName` / `predictedProbabilitiesName`, with feature
// types string and dictionary<string>. Differences from coremltools' naming: the probability
// dictionary keeps the probabilities output's own name (as mlconv's `.mlmodel` classifiers do)
// instead of `classLabel_probs`; the label is `classLabel`, coremltools' default.
import MLGraph

extension MILExportSession {
    /// The name of the predicted-label output (coremltools' default `predicted_feature_name`).
    static let classLabelName = "classLabel"

    /// The IR output holding the class probabilities, or nil when the graph is no classifier.
    ///
    /// - Throws: `MLProgramExportError.invalidGraph` when the probabilities output is not a graph
    ///   output, its element count differs from the number of labels, or `classLabel` is
    ///   already a feature name.
    func classifierProbabilities() throws -> String? {
        guard let labels = graph.description.classLabels, !labels.isEmpty else { return nil }
        let p = graph.description.probabilitiesOutput ?? graph.outputs.first ?? ""
        guard graph.outputs.contains(p) else {
            throw MLProgramExportError.invalidGraph(what: "classifier probabilities output '\(p)'", expected: "one of the graph outputs (\(graph.outputs.joined(separator: ", ")))",
                                                    found: "no such output; set ModelDescription.probabilitiesOutput")
        }
        let ty = try irType(p)
        guard ty.elementType.isFloat, ty.elementCount == labels.count else {
            throw MLProgramExportError.invalidGraph(what: "classifier probabilities output '\(p)'", expected: "\(labels.count) float values, one per class label",
                                                    found: "\(ty) (give one label per class)")
        }
        if graph.description.outputs.first(where: { $0.name == p })?.image != nil {
            throw MLProgramExportError.invalidGraph(what: "classifier probabilities output '\(p)'", expected: "a multi-array output", found: "an image output")
        }
        return p
    }

    /// Emits the `classify` op on IR output `p` named `final` (its feature name): returns the two
    /// block outputs (label, probabilities) and their feature descriptions.
    mutating func emitClassify(_ p: String, final: String) throws -> (outputs: [String], features: [Spec.FeatureDescription]) {
        let labels = graph.description.classLabels ?? []
        var src = try value(p, node: "classify")
        let shape = try irType(p).shape
        if compute == .float16 {
            let name = b.fresh(src + "_cast_to_fp32")
            src = b.op("cast", name: name, inputs: [("x", [src]), ("dtype", [b.constString(name + "_dtype_0", "fp32")])],
                       outputs: [(name, MILProgramBuilder.tensorType(.float32, shape))])[0]
        }
        let strType = MILProgramBuilder.tensorType(.string, [])
        let classes = Spec.MILSpec.Value(
            type: Spec.MILSpec.ValueType(type: .listType(Spec.MILSpec.ListType(
                type: strType, length: Spec.MILSpec.Dimension(dimension: .constant(.init(size: UInt64(labels.count))))))),
            value: .immediateValue(.init(value: .list(Spec.MILSpec.ListValue(values: labels.map(MILProgramBuilder.stringValue))))))
        let dictType = Spec.MILSpec.ValueType(type: .dictionaryType(Spec.MILSpec.DictionaryType(
            keyType: strType, valueType: Spec.MILSpec.ValueType(type: .tensorType(Spec.MILSpec.TensorType(dataType: .float64, rank: 0, dimensions: []))))))
        let label = Self.classLabelName
        b.markDefined(label)
        b.operations.append(Spec.MILSpec.Operation(
            type: "classify",
            inputs: ["probabilities": Spec.MILSpec.Argument(arguments: [.init(binding: .name(src))]),
                     "classes": Spec.MILSpec.Argument(arguments: [.init(binding: .value(classes))])],
            outputs: [Spec.MILSpec.NamedValueType(name: label, type: strType), Spec.MILSpec.NamedValueType(name: final, type: dictType)],
            attributes: ["name": MILProgramBuilder.stringValue(b.fresh("classify"))]))
        let fd = graph.description.outputs.first { $0.name == p }
        return ([label, final], [
            Spec.FeatureDescription(name: label, shortDescription: "Most likely class label", type: Spec.FeatureType(.string)),
            Spec.FeatureDescription(name: final, shortDescription: fd?.shortDescription ?? "", type: Spec.FeatureType(.dictionary(Spec.DictionaryFeatureType(keyType: .string)))),
        ])
    }
}
