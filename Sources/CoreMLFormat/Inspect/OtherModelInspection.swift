// Reports for the model kinds the codec keeps as opaque wire data: the facts readable from the
// wire (field numbers from Apple's .proto files), and a plain statement of what mlconv cannot do.

enum OtherModelInspection {
    static func describe(kind: Spec.ModelKind, content: Spec.UnknownFields, notes: inout [String]) -> CoreMLInspector.Section {
        var s = CoreMLInspector.Section()
        let f = ProtoFields(unknown: content)
        var d: [String: Any] = [:]
        var lines: [String] = []
        var labels: (kind: String, labels: [String])?
        let what: String  // what mlconv cannot do, said plainly

        switch kind {
        case .treeEnsembleClassifier, .treeEnsembleRegressor:
            let ens = f.message(1) ?? ProtoFields([])
            let nodes = ens.messages(1)
            let trees = Set(nodes.map { $0.varint(1) ?? 0 }).count
            d["trees"] = trees
            d["nodes"] = nodes.count
            d["predictionDimensions"] = Checked.display(ens.varint(2) ?? 0)
            lines.append("  Tree ensemble: \(trees) tree\(trees == 1 ? "" : "s"), \(CoreMLInspector.grouped(nodes.count)) nodes, "
                + "\(ens.varint(2) ?? 0) prediction dimension(s)")
            let transforms = ["none", "softmax", "logistic (regression)", "logistic (classifier)"]
            if let t = f.varint(2) {
                d["postEvaluationTransform"] = Checked.index(t, below: transforms.count).map { transforms[$0] } ?? "\(t)"
                lines.append("  Post-evaluation transform: \(d["postEvaluationTransform"]!)")
            }
            labels = f.classLabels()
            what = "tree ensembles: trees not shown; mlconv cannot run tree ensembles"
        case .glmClassifier, .glmRegressor:
            let rows = f.messages(1)
            let cols = rows.first?.repeatedCount(1, elementSize: 8) ?? 0
            d["weightRows"] = rows.count
            d["weightColumns"] = cols
            d["offsets"] = f.repeatedCount(2, elementSize: 8)
            let transforms = ["none", "logit", "probit"]
            let t = f.varint(3) ?? 0
            d["postEvaluationTransform"] = Checked.index(t, below: transforms.count).map { transforms[$0] } ?? "\(t)"
            var line = "  Generalized linear model: \(rows.count)×\(cols) weights, transform \(d["postEvaluationTransform"]!)"
            if kind == .glmClassifier {
                let enc = (f.varint(4) ?? 0) == 1 ? "one-vs-rest" : "reference class"
                d["classEncoding"] = enc
                line += ", class encoding \(enc)"
                labels = f.classLabels()
            }
            lines.append(line)
            what = "generalized linear models: mlconv cannot run them"
        case .supportVectorClassifier, .supportVectorRegressor:
            let kernelNames: [UInt32: String] = [1: "linearKernel", 2: "rbfKernel", 3: "polyKernel", 4: "sigmoidKernel"]
            let k = f.message(1)?.fields.first.map { kernelNames[$0.number] ?? "field \($0.number)" } ?? "none"
            d["kernel"] = k
            var line = "  Support vector machine: kernel \(k)"
            if kind == .supportVectorClassifier {
                let perClass = f.varints(2).map { Int(Int32(truncatingIfNeeded: $0)) }
                d["supportVectorsPerClass"] = perClass
                let vectors = f.message(4)?.count(1) ?? f.message(3)?.count(1) ?? 0
                d["supportVectors"] = vectors
                line += ", \(vectors) support vectors" + (perClass.isEmpty ? "" : " (per class \(perClass))")
                labels = f.classLabels()
            } else {
                let vectors = f.message(3)?.count(1) ?? f.message(2)?.count(1) ?? 0
                d["supportVectors"] = vectors
                line += ", \(vectors) support vectors"
            }
            lines.append(line)
            what = "support vector machines: mlconv cannot run them"
        case .kNearestNeighborsClassifier:
            let index = f.message(1) ?? ProtoFields([])
            let dims = Int(Int32(truncatingIfNeeded: index.varint(1) ?? 0))
            let samples = index.count(2)
            let indexType = index.has(110) ? "kd-tree" : index.has(100) ? "linear" : "unspecified"
            // numberOfNeighbors (Int64Parameter, field 3: defaultValue 1, range 10, set 11); older files: int32 k = 2.
            let kParam = f.message(3)
            let k = Int(Int64(bitPattern: kParam?.varint(1) ?? f.varint(2) ?? 0))
            if let r = kParam?.message(10) { d["kRange"] = [Checked.display(r.varint(1) ?? 0), Int(Int64(bitPattern: r.varint(2) ?? 0))] }
            if let set = kParam?.message(11) { d["kSet"] = set.varints(1).map { Int(Int64(bitPattern: $0)) } }
            let weighting = f.has(210) ? "inverse distance" : "uniform"
            d["k"] = k; d["dimensions"] = dims; d["samples"] = samples; d["index"] = indexType; d["weighting"] = weighting
            if let def = f.string(110) { d["defaultLabel"] = def } else if let def = f.varint(111) { d["defaultLabel"] = "\(Int64(bitPattern: def))" }
            lines.append("  k-nearest neighbors: k = \(k), \(dims) dimensions, \(samples) stored samples, \(indexType) index, \(weighting) weighting")
            // kNN labels are stored one per sample: show the distinct labels, in first-seen order.
            if let l = f.classLabels() {
                var seen = Set<String>()
                labels = (kind: l.kind, labels: l.labels.filter { seen.insert($0).inserted })
            }
            what = "k-nearest-neighbors classifiers: mlconv cannot run them"
        case .textClassifier, .wordTagger:
            let rev = Checked.display(f.varint(1) ?? 0)
            let lang = f.string(10) ?? ""
            let blob = f.all(100).first?.bytes.count ?? 0
            d["revision"] = rev; d["language"] = lang; d["modelParameterBytes"] = blob
            var line = "  \(kind == .textClassifier ? "Text classifier" : "Word tagger"): revision \(rev), language \(lang.isEmpty ? "unspecified" : lang), "
                + "model parameters \(CoreMLInspector.byteString(blob)) (opaque)"
            if kind == .wordTagger {
                let tags = f.message(200)?.strings(1) ?? []
                d["tags"] = tags
                line += ", \(tags.count) tags: " + tags.prefix(8).joined(separator: ", ")
                let outs = [20: "tokens", 21: "tags", 22: "locations", 23: "lengths"].sorted { $0.key < $1.key }.compactMap { k, v in
                    f.string(UInt32(k)).map { "\(v) → \($0)" }
                }
                if !outs.isEmpty { d["outputFeatureNames"] = outs; line += "; outputs " + outs.joined(separator: ", ") }
            } else {
                labels = f.message(200).map { ("string", $0.strings(1)) }
            }
            lines.append(line)
            what = "Create ML natural-language models: the model is an opaque Apple blob; mlconv cannot run it"
        case .visionFeaturePrint:
            if let scene = f.message(20) {
                let raw = scene.varint(1) ?? 0, v = Checked.display(raw)
                d["featurePrint"] = "scene"; d["version"] = v
                lines.append("  Vision feature print: scene, version \(v)" + (raw == 1 ? " (299×299 input, 2048 features)" : raw == 2 ? " (360×360 input, 768 features)" : ""))
            } else if let obj = f.message(21) {
                let v = Checked.display(obj.varint(1) ?? 0)
                d["featurePrint"] = "objects"; d["version"] = v; d["outputs"] = obj.strings(100)
                lines.append("  Vision feature print: objects, version \(v), outputs \(obj.strings(100).joined(separator: ", "))")
            } else {
                lines.append("  Vision feature print: type not set")
            }
            what = "Vision feature prints are built into Apple's OSes; mlconv cannot run them"
        case .audioFeaturePrint:
            if let sound = f.message(20) {
                let v = Checked.display(sound.varint(1) ?? 0)
                d["featurePrint"] = "sound"; d["version"] = v
                lines.append("  Audio feature print: sound, version \(v)")
            } else {
                lines.append("  Audio feature print: type not set")
            }
            what = "audio feature prints are built into Apple's OSes; mlconv cannot run them"
        case .nonMaximumSuppression:
            let perClass = f.message(1)?.varint(1).map { $0 != 0 } ?? false
            d["suppression"] = f.has(1) ? "pickTop" : "unspecified"
            d["perClass"] = perClass
            if let iou = f.double(110) { d["iouThreshold"] = iou }
            if let c = f.double(111) { d["confidenceThreshold"] = c }
            let names = [200: "confidenceInput", 201: "coordinatesInput", 202: "iouThresholdInput", 203: "confidenceThresholdInput",
                         210: "confidenceOutput", 211: "coordinatesOutput"]
            var io: [String: String] = [:]
            for (k, v) in names { if let n = f.string(UInt32(k)), !n.isEmpty { io[v] = n } }
            d["featureNames"] = io
            lines.append("  Non-maximum suppression: \(d["suppression"]!)\(perClass ? " per class" : ""), IoU \(f.double(110) ?? 0), "
                + "confidence \(f.double(111) ?? 0)")
            labels = f.classLabels()
            what = "non-maximum suppression: mlconv cannot run it"
        case .oneHotEncoder:
            let cats = f.message(1)?.strings(1) ?? f.message(2)?.varints(1).map { "\(Int64(bitPattern: $0))" } ?? []
            d["categories"] = cats.count
            d["categoryType"] = f.has(1) ? "string" : f.has(2) ? "int64" : "none"
            d["outputSparse"] = (f.varint(10) ?? 0) != 0
            d["handleUnknown"] = (f.varint(11) ?? 0) == 1 ? "ignore" : "error"
            lines.append("  One-hot encoder: \(cats.count) \(d["categoryType"]!) categories" + (cats.isEmpty ? "" : " (" + cats.prefix(6).joined(separator: ", ") + (cats.count > 6 ? ", …" : "") + ")")
                + ", unknown values \(d["handleUnknown"] as! String == "ignore" ? "ignored" : "rejected")")
            what = "one-hot encoders: mlconv cannot run them"
        case .featureVectorizer:
            let cols = f.messages(1).map { ($0.string(1) ?? "", Checked.display($0.varint(2) ?? 0)) }
            d["inputs"] = cols.map { ["column": $0.0, "dimensions": $0.1] as [String: Any] }
            lines.append("  Feature vectorizer: " + cols.map { "\($0.0) (\($0.1))" }.joined(separator: ", "))
            what = "feature vectorizers: mlconv cannot run them"
        case .dictVectorizer:
            let n = f.message(1)?.count(1) ?? f.message(2)?.repeatedCount(1, elementSize: 0) ?? 0
            d["keys"] = n
            d["keyType"] = f.has(1) ? "string" : f.has(2) ? "int64" : "none"
            lines.append("  Dictionary vectorizer: \(n) \(d["keyType"]!) keys")
            what = "dictionary vectorizers: mlconv cannot run them"
        case .arrayFeatureExtractor:
            let idx = f.varints(1).map { Checked.display($0) }
            d["extractIndex"] = idx
            lines.append("  Array feature extractor: indices \(idx)")
            what = "array feature extractors: mlconv cannot run them"
        case .mlProgram:
            let p = program(f)
            for (k, v) in p.json { d[k] = v }
            lines += p.lines
            what = "mlProgram: runs with `mlconv predict` / `mlconv compile` (ops: `mlconv ops --mil`); MIL text below"
        case .customModel:
            let cls = f.string(10) ?? ""
            d["className"] = cls
            lines.append("  Custom model: class \(cls.isEmpty ? "(unnamed)" : cls)" + ((f.string(40)).map { " — \($0)" } ?? ""))
            what = "custom models are implemented by the app; mlconv cannot run them"
        default:
            d["topLevelFields"] = content.count
            d["bytes"] = content.reduce(0) { $0 + $1.data.count }
            lines.append("  \(kind.name): \(CoreMLInspector.byteString(content.reduce(0) { $0 + $1.data.count })) of parameters, not decoded by mlconv")
            what = "\(kind.name): contents not shown; mlconv cannot run this model type"
        }

        if let l = labels {
            s.json["classLabels"] = ["count": l.labels.count, "type": l.kind, "first": Array(l.labels.prefix(10))] as [String: Any]
            lines.append(l.labels.isEmpty ? "  Class labels:  none yet"
                : "  Class labels:  \(l.labels.count) \(l.kind == "string" ? "strings" : "integers"): "
                + l.labels.prefix(8).map { l.kind == "string" ? "\"\($0)\"" : $0 }.joined(separator: ", ") + (l.labels.count > 8 ? ", …" : ""))
        }
        s.json["details"] = d
        s.json["mlconv"] = ["canImport": false, "canRun": false, "summary": what] as [String: Any]
        notes.append(what)
        s.lines = [""] + lines
        return s
    }

    // MARK: ML programs (MIL.proto)

    static let milTypes: [UInt64: String] = [1: "BOOL", 2: "STRING", 10: "FLOAT16", 11: "FLOAT32", 12: "FLOAT64", 13: "BFLOAT16",
                                              21: "INT8", 22: "INT16", 23: "INT32", 24: "INT64", 31: "UINT8", 32: "UINT16",
                                              33: "UINT32", 34: "UINT64", 0: "UNUSED"]

    /// Functions, op counts by type (nested blocks included), const data types and how many
    /// consts live in the weights file.
    static func program(_ f: ProtoFields) -> (json: [String: Any], lines: [String]) {
        var json: [String: Any] = ["programVersion": Checked.display(f.varint(1) ?? 0)]
        var lines: [String] = []
        var functions: [[String: Any]] = []
        for (name, fn) in f.mapEntries(2) {
            let opset = fn.string(2) ?? ""
            let blocks = fn.mapEntries(3)
            let block = blocks.first { $0.key == opset }?.value ?? blocks.first?.value ?? ProtoFields([])
            var ops: [String: Int] = [:], order: [String] = []
            var constTypes: [String: Int] = [:], typeOrder: [String] = []
            var blobConsts = 0
            func walk(_ b: ProtoFields) {
                for op in b.messages(3) {
                    let t = op.string(1) ?? "?"
                    if ops[t] == nil { order.append(t) }
                    ops[t, default: 0] += 1
                    if t == "const" || t.hasPrefix("constexpr") {
                        for (k, v) in op.mapEntries(5) where k == "val" {
                            let dt = v.message(2)?.message(1)?.varint(1) ?? 0
                            let n = milTypes[dt] ?? "type \(dt)"
                            if constTypes[n] == nil { typeOrder.append(n) }
                            constTypes[n, default: 0] += 1
                            if v.has(5) { blobConsts += 1 }
                        }
                    }
                    for nested in op.messages(4) { walk(nested) }
                }
            }
            walk(block)
            let total = ops.values.reduce(0, +)
            let hist = order.enumerated().sorted { a, b in
                let (ca, cb) = (ops[a.element]!, ops[b.element]!)
                return ca != cb ? ca > cb : a.offset < b.offset
            }.map { ($0.element, ops[$0.element]!) }
            let inputs = fn.messages(1).compactMap { $0.string(1) }
            functions.append(["name": name, "opset": opset, "inputs": inputs, "operationCount": total, "operations": ops,
                              "constDataTypes": constTypes, "constsInWeightFile": blobConsts])
            lines.append("  ML program function \(name) (opset \(opset)): \(total) operations")
            lines.append("    Operations:  " + CoreMLInspector.histogramText(Array(hist.prefix(16))) + (hist.count > 16 ? ", …" : ""))
            if !constTypes.isEmpty {
                lines.append("    Constants:   " + CoreMLInspector.histogramText(typeOrder.map { ($0, constTypes[$0]!) })
                    + "; \(blobConsts) stored in the weights file")
            }
        }
        json["functions"] = functions
        if functions.isEmpty { lines.append("  ML program: no functions found") }
        return (json, lines)
    }
}
