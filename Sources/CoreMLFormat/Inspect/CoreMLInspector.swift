// `mlconv inspect` for Core ML models: what Xcode's model viewer shows, for every model kind.
import Foundation

/// Describes any Core ML model file (`.mlmodel` or `.mlpackage`): model type, specification
/// version and the OS releases it needs, inputs and outputs with their types, metadata, class
/// labels, and for neural networks the preprocessing, layers, parameter count, weight precision
/// and custom layer classes. Pipelines are described stage by stage (recursively). Model kinds
/// mlconv does not decode in full (tree ensembles, GLMs, SVMs, k-NN, text and vision models, ML
/// programs, …) get the facts that can be read from their wire data, and the report says plainly
/// what mlconv cannot show or run.
public enum CoreMLInspector {
    /// Inspects the model at `url` (an `.mlmodel` file or an `.mlpackage` directory).
    /// - Throws: the codec's `CoreMLFormatError` (`.unreadable`, `.invalidPackage`, `.notAModel`)
    ///   when the file cannot be read or is not a Core ML model.
    /// Whether mlconv can run a (sub-)model, and a one-line reason; supplied by whoever knows the
    /// runtime's model loaders (`mlconv inspect` asks `MLPrediction.CoreMLModelLoader`). Nil from
    /// the check, or no check, keeps the inspector's own statement.
    public typealias RunCheck = @Sendable (Spec.Model) -> (canRun: Bool, summary: String)?

    /// - Parameter runCheck: says for the model and each pipeline stage whether mlconv runs it.
    public static func report(for url: URL, runCheck: RunCheck? = nil) throws -> CoreMLReport {
        let path = url.path
        var isDir: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDir)
        var json: [String: Any] = ["file": path, "fileName": url.lastPathComponent]
        var head: [String] = [url.lastPathComponent]
        let model: Spec.Model
        if exists && isDir.boolValue {
            let pkg = try MLPackage.read(at: path)
            model = pkg.model
            let size = directorySize(path)
            json["format"] = "mlpackage"
            json["fileSizeBytes"] = size
            var p: [String: Any] = ["rootModelPath": pkg.rootModelPath]
            var line = "  File:          .mlpackage, \(byteString(size)); root model \(relative(pkg.rootModelPath, to: path))"
            if let w = pkg.weightsPath {
                p["weightsPath"] = w
                let ws = directorySize(w)
                p["weightsBytes"] = ws
                line += "; weights \(relative(w, to: path)) (\(byteString(ws)))"
            }
            json["package"] = p
            head.append(line)
        } else {
            model = try Spec.Model.load(contentsOf: path)
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            json["format"] = "mlmodel"
            json["fileSizeBytes"] = size
            head.append("  File:          .mlmodel, \(byteString(size))")
        }
        try validate(model, file: path)
        var section = describe(model, fileName: url.lastPathComponent, topLevel: true, runCheck: runCheck)
        for (k, v) in section.json { json[k] = v }
        if !model.unknownFieldWarnings.isEmpty {
            json["warnings"] = model.unknownFieldWarnings
            section.lines.append("")
            section.lines.append("Fields mlconv's schema does not decode (\(model.unknownFieldWarnings.count)):")
            for w in model.unknownFieldWarnings.prefix(12) { section.lines.append("  - \(w)") }
            if model.unknownFieldWarnings.count > 12 { section.lines.append("  … and \(model.unknownFieldWarnings.count - 12) more (see --json)") }
        }
        return CoreMLReport(jsonObject: json, text: (head + section.lines).joined(separator: "\n") + "\n")
    }

    /// Checks the size fields the report computes with (channel counts, kernel sizes, weight
    /// shapes) of every neural network in `model`, pipelines included.
    /// - Throws: `CoreMLFormatError.invalidValue` naming the layer, the field, the accepted range
    ///   and the value found.
    static func validate(_ model: Spec.Model, file: String) throws {
        let network: Spec.NeuralNetwork?
        switch model.type {
        case let .neuralNetwork(n): network = n
        case let .neuralNetworkClassifier(c): network = c.network
        case let .neuralNetworkRegressor(r): network = r.network
        case let .pipeline(p): network = nil; for m in p.models { try validate(m, file: file) }
        case let .pipelineClassifier(p): network = nil; for m in p.pipeline?.models ?? [] { try validate(m, file: file) }
        case let .pipelineRegressor(p): network = nil; for m in p.pipeline?.models ?? [] { try validate(m, file: file) }
        default: network = nil
        }
        for l in network?.layers ?? [] {
            do { _ = try NeuralNetworkInspection.weights(of: l) } catch let e as LayerImportFailure {
                throw CoreMLFormatError.invalidValue(file: file, what: "layer '\(l.name)' (\(LayerImporter.typeName(l)))", message: e.reason)
            }
        }
    }

    // MARK: - One model (recursive for pipelines)

    struct Section {
        var json: [String: Any] = [:]
        var lines: [String] = []
    }

    static func describe(_ model: Spec.Model, fileName: String, topLevel: Bool, runCheck: RunCheck? = nil) -> Section {
        var s = Section()
        let kind = model.kind?.name ?? "none"
        let v = Int(model.specificationVersion)
        s.json["modelType"] = kind
        s.json["specificationVersion"] = v
        s.json["isUpdatable"] = model.isUpdatable
        let os = minimumOS(v)
        if !os.isEmpty { s.json["minimumDeploymentTarget"] = os }
        var notes: [String] = []

        s.lines.append("  Type:          \(kind)\(kindGloss(model))")
        s.lines.append("  Spec version:  \(v)" + (os.isEmpty ? " (unknown version)" : " (" + ["iOS", "macOS", "tvOS", "watchOS"].compactMap { k in os[k].map { "\(k) \($0)+" } }.joined(separator: ", ") + ")"))
        s.lines.append("  Updatable:     \(model.isUpdatable ? "yes" : "no")")
        if model.isUpdatable && v < 4 {
            notes.append("the model is marked updatable but its specificationVersion is \(v); on-device training needs version 4 (iOS 13)")
        }

        if let d = model.description {
            if let m = d.metadata {
                var md: [String: Any] = ["author": m.author, "license": m.license, "shortDescription": m.shortDescription,
                                         "versionString": m.versionString]
                md["userDefined"] = m.userDefinedDictionary
                s.json["metadata"] = md
                if !m.shortDescription.isEmpty { s.lines.append("  Description:   \(oneLine(m.shortDescription))") }
                if !m.author.isEmpty { s.lines.append("  Author:        \(oneLine(m.author))") }
                if !m.license.isEmpty { s.lines.append("  License:       \(oneLine(m.license))") }
                if !m.versionString.isEmpty { s.lines.append("  Version:       \(oneLine(m.versionString))") }
                for e in m.userDefined { s.lines.append("  User-defined:  \(e.key) = \(oneLine(e.value))") }
            }
            s.json["inputs"] = d.input.map(featureJSON)
            s.json["outputs"] = d.output.map(featureJSON)
            if !d.trainingInput.isEmpty { s.json["trainingInputs"] = d.trainingInput.map(featureJSON) }
            if !d.state.isEmpty { s.json["states"] = d.state.map(featureJSON) }
            if !d.predictedFeatureName.isEmpty { s.json["predictedFeatureName"] = d.predictedFeatureName }
            if !d.predictedProbabilitiesName.isEmpty { s.json["predictedProbabilitiesName"] = d.predictedProbabilitiesName }
            s.lines.append("")
            let roles = RecurrentInspection.featureRoles(model)
            if !roles.isEmpty {
                s.json["inputs"] = d.input.map { f in featureJSON(f).merging(roles[f.name].map { ["recurrentRole": $0] } ?? [:]) { a, _ in a } }
                s.json["outputs"] = d.output.map { f in featureJSON(f).merging(roles[f.name].map { ["recurrentRole": $0] } ?? [:]) { a, _ in a } }
            }
            s.lines.append("  Inputs:")
            s.lines += featureLines(d.input, roles: roles)
            s.lines.append("  Outputs:")
            s.lines += featureLines(d.output, roles: roles)
            if !d.state.isEmpty {
                s.lines.append("  States:")
                s.lines += featureLines(d.state)
            }
            if !d.trainingInput.isEmpty {
                s.lines.append("  Training inputs:")
                s.lines += featureLines(d.trainingInput)
            }
            if !d.predictedFeatureName.isEmpty || !d.predictedProbabilitiesName.isEmpty {
                var parts: [String] = []
                if !d.predictedFeatureName.isEmpty { parts.append("predicted feature '\(d.predictedFeatureName)'") }
                if !d.predictedProbabilitiesName.isEmpty { parts.append("probabilities '\(d.predictedProbabilitiesName)'") }
                s.lines.append("  Predicted:     " + parts.joined(separator: ", "))
            }
            if !d.functions.isEmpty {
                s.json["functions"] = d.functions.map { ["name": $0.name, "inputs": $0.input.map(featureJSON), "outputs": $0.output.map(featureJSON)] as [String: Any] }
                s.lines.append("  Functions:     " + d.functions.map(\.name).joined(separator: ", ")
                    + (d.defaultFunctionName.isEmpty ? "" : " (default \(d.defaultFunctionName))"))
            }
        } else {
            s.lines.append("  (no description: the model declares no inputs or outputs)")
        }

        // Kind-specific part.
        var body = Section()
        switch model.type {
        case let .neuralNetwork(n):
            body = NeuralNetworkInspection.describe(n, classifier: nil, model: model, fileName: fileName, notes: &notes)
        case let .neuralNetworkClassifier(c):
            body = NeuralNetworkInspection.describe(c.network, classifier: c, model: model, fileName: fileName, notes: &notes)
        case let .neuralNetworkRegressor(r):
            body = NeuralNetworkInspection.describe(r.network, classifier: nil, model: model, fileName: fileName, notes: &notes)
        case .pipeline, .pipelineClassifier, .pipelineRegressor:
            body = pipeline(model, fileName: fileName, notes: &notes, runCheck: runCheck)
        case let .serializedModel(sm):
            body.json["details"] = ["identifier": sm.identifier, "bytes": sm.model.count]
            body.lines = ["", "  Serialized model '\(sm.identifier)', \(byteString(sm.model.count)): contents not shown; mlconv cannot run it"]
            body.json["mlconv"] = ["canImport": false, "canRun": false, "summary": "serialized models are opaque to mlconv"]
        case let .other(k, content):
            body = OtherModelInspection.describe(kind: k, content: content, notes: &notes)
            if let (canRun, summary) = runCheck?(model) {
                // The runtime's own answer replaces the inspector's statement of what it cannot do.
                let old = (body.json["mlconv"] as? [String: Any])?["summary"] as? String
                notes.removeAll { $0 == old }
                if !canRun { notes.append(summary) }
                body.json["mlconv"] = ["canImport": false, "canRun": canRun, "summary": summary] as [String: Any]
                if canRun { body.lines.append("  mlconv: \(summary)") }
            }
        case .none:
            body.lines = ["", "  The model has no type (the Model.Type field is empty)."]
            body.json["mlconv"] = ["canImport": false, "canRun": false, "summary": "the model has no type"]
        }
        for (k, v) in body.json { s.json[k] = v }
        s.lines += body.lines
        if !notes.isEmpty {
            s.json["notes"] = notes
            s.lines.append("")
            s.lines.append("  Notes:")
            for n in notes { s.lines.append("    - \(n)") }
        }
        return s
    }

    static func pipeline(_ model: Spec.Model, fileName: String, notes: inout [String], runCheck: RunCheck? = nil) -> Section {
        var s = Section()
        let stages = model.pipelineModels
        let names: [String] = {
            switch model.type {
            case let .pipeline(p): return p.names
            case let .pipelineClassifier(p): return p.pipeline?.names ?? []
            case let .pipelineRegressor(p): return p.pipeline?.names ?? []
            default: return []
            }
        }()
        var items: [[String: Any]] = []
        s.lines.append("")
        s.lines.append("  Pipeline of \(stages.count) stage\(stages.count == 1 ? "" : "s"): " + stages.map { $0.kind?.name ?? "none" }.joined(separator: " → "))
        var allRun = !stages.isEmpty
        for (i, m) in stages.enumerated() {
            let name = i < names.count ? names[i] : ""
            var sub = describe(m, fileName: fileName, topLevel: false, runCheck: runCheck)
            var j = sub.json
            j["index"] = i
            if !name.isEmpty { j["name"] = name }
            items.append(j)
            if Int(m.specificationVersion) > Int(model.specificationVersion) {
                notes.append("stage \(i) (\(m.kind?.name ?? "none")) has specificationVersion \(m.specificationVersion), "
                    + "above the pipeline's \(model.specificationVersion); Core ML requires the highest version of the parts")
            }
            if ((j["mlconv"] as? [String: Any])?["canRun"] as? Bool) != true { allRun = false }
            sub.lines = sub.lines.map { $0.isEmpty ? "" : "    " + $0 }
            s.lines.append("")
            s.lines.append("    Stage \(i)\(name.isEmpty ? "" : " '\(name)'"):")
            s.lines += sub.lines
        }
        s.json["pipeline"] = ["stageCount": stages.count, "stages": items] as [String: Any]
        var summary = "pipelines are not imported by mlconv (only neural networks are); "
            + (allRun ? "every stage is a neural network mlconv could import on its own" : "some stages cannot be run by mlconv")
        var canRun = false
        if let (ok, why) = runCheck?(model) { canRun = ok; summary = why }
        s.json["mlconv"] = ["canImport": false, "canRun": canRun, "summary": summary]
        s.lines.append("")
        s.lines.append("  mlconv: \(summary)")
        return s
    }

    // MARK: - Features

    static func featureJSON(_ f: Spec.FeatureDescription) -> [String: Any] {
        var j: [String: Any] = ["name": f.name, "shortDescription": f.shortDescription]
        guard let t = f.type else {
            j["type"] = "none"
            j["typeDescription"] = "no type"
            return j
        }
        j["isOptional"] = t.isOptional
        j["typeDescription"] = typeDescription(t)
        switch t.kind {
        case .none: j["type"] = "none"
        case .int64: j["type"] = "int64"
        case .double: j["type"] = "double"
        case .string: j["type"] = "string"
        case let .image(img):
            j["type"] = "image"
            j["width"] = Int(img.width); j["height"] = Int(img.height); j["colorSpace"] = img.colorSpace.description
            switch img.sizeFlexibility {
            case let .enumeratedSizes(sizes)?:
                j["sizeFlexibility"] = ["enumeratedSizes": sizes.map { ["width": Checked.display($0.width), "height": Checked.display($0.height)] }]
            case let .imageSizeRange(w, h)?:
                j["sizeFlexibility"] = ["widthRange": rangeJSON(w), "heightRange": rangeJSON(h)]
            case nil: break
            }
        case let .multiArray(a):
            j["type"] = "multiArray"
            j["shape"] = a.shape.map { Int($0) }
            j["dataType"] = a.dataType.description
            switch a.shapeFlexibility {
            case let .enumeratedShapes(shapes)?: j["shapeFlexibility"] = ["enumeratedShapes": shapes.map { $0.map { Int($0) } }]
            case let .shapeRange(r)?: j["shapeFlexibility"] = ["shapeRange": r.map(rangeJSON)]
            case nil: break
            }
            switch a.defaultValue {
            case let .int(v)?: j["defaultValue"] = Int(v)
            case let .float(v)?: j["defaultValue"] = Double(v)
            case let .double(v)?: j["defaultValue"] = v
            case nil: break
            }
        case let .dictionary(d):
            j["type"] = "dictionary"
            j["keyType"] = d.keyType == .string ? "string" : d.keyType == .int64 ? "int64" : "none"
        case let .sequence(q):
            j["type"] = "sequence"
            j["elementType"] = q.elementType == .string ? "string" : q.elementType == .int64 ? "int64" : "none"
            if let r = q.sizeRange { j["sizeRange"] = rangeJSON(r) }
        case let .state(st):
            j["type"] = "state"
            if let a = st.arrayType { j["shape"] = a.shape.map { Int($0) }; j["dataType"] = a.dataType.description }
        }
        return j
    }

    static func rangeJSON(_ r: Spec.SizeRange?) -> [String: Any] {
        guard let r else { return [:] }
        return ["lowerBound": Int(clamping: r.lowerBound), "upperBound": Int(r.upperBound)]
    }

    static func rangeText(_ r: Spec.SizeRange?) -> String {
        guard let r else { return "?" }
        return "\(r.lowerBound)…" + (r.upperBound < 0 ? "∞" : "\(r.upperBound)")
    }

    /// E.g. "MultiArray (Float32 3 × 320 × 320)", "Image (RGB 320 × 320)", "Dictionary (String → Double)".
    static func typeDescription(_ t: Spec.FeatureType) -> String {
        var s: String
        switch t.kind {
        case .none: s = "no type"
        case .int64: s = "Int64"
        case .double: s = "Double"
        case .string: s = "String"
        case let .image(img):
            s = "Image (\(img.colorSpace) \(img.width) × \(img.height))"
            switch img.sizeFlexibility {
            case let .enumeratedSizes(sizes)?: s += ", sizes " + sizes.map { "\($0.width)×\($0.height)" }.joined(separator: ", ")
            case let .imageSizeRange(w, h)?: s += ", width \(rangeText(w)), height \(rangeText(h))"
            case nil: break
            }
        case let .multiArray(a):
            let sep = a.dataType == .invalid ? ", " : " "
            s = "MultiArray (\(arrayTypeName(a.dataType))" + (a.shape.isEmpty ? ", shape unspecified" : sep + a.shape.map(String.init).joined(separator: " × ")) + ")"
            switch a.shapeFlexibility {
            case let .enumeratedShapes(shapes)?:
                s += ", shapes " + shapes.map { "[" + $0.map(String.init).joined(separator: "×") + "]" }.joined(separator: ", ")
            case let .shapeRange(r)?: s += ", ranges " + r.map { "[" + rangeText($0) + "]" }.joined(separator: " × ")
            case nil: break
            }
            switch a.defaultValue {
            case let .int(v)?: s += ", default \(v)"
            case let .float(v)?: s += ", default \(v)"
            case let .double(v)?: s += ", default \(v)"
            case nil: break
            }
        case let .dictionary(d):
            s = "Dictionary (\(d.keyType == .string ? "String" : d.keyType == .int64 ? "Int64" : "?") → Double)"
        case let .sequence(q):
            s = "Sequence of \(q.elementType == .string ? "String" : q.elementType == .int64 ? "Int64" : "?")"
            if let r = q.sizeRange { s += ", length \(rangeText(r))" }
        case let .state(st):
            s = "State (" + (st.arrayType.map { arrayTypeName($0.dataType) + " " + $0.shape.map(String.init).joined(separator: " × ") } ?? "?") + ")"
        }
        if t.isOptional { s += ", optional" }
        return s
    }

    static func arrayTypeName(_ d: Spec.ArrayFeatureType.DataType) -> String {
        switch d {
        case .float32: return "Float32"
        case .double: return "Double"
        case .int32: return "Int32"
        case .float16: return "Float16"
        case .invalid: return "invalid data type 0"
        default: return "data type \(d.rawValue)"
        }
    }

    /// One line per feature; `roles` adds what a feature is to the recurrent layers
    /// (`RecurrentInspection.featureRoles`) in brackets.
    static func featureLines(_ fs: [Spec.FeatureDescription], roles: [String: String] = [:]) -> [String] {
        if fs.isEmpty { return ["    (none)"] }
        let w = min(28, fs.map(\.name.count).max() ?? 0)
        return fs.map { f in
            let name = f.name.padding(toLength: max(w, f.name.count), withPad: " ", startingAt: 0)
            var line = "    \(name)  \(f.type.map(typeDescription) ?? "no type")"
            if let r = roles[f.name] { line += " [\(r)]" }
            if !f.shortDescription.isEmpty { line += " — \(oneLine(f.shortDescription))" }
            return line
        }
    }

    // MARK: - Helpers

    /// The first OS releases that read `specificationVersion` (coreml-format-facts §2.1).
    static func minimumOS(_ v: Int) -> [String: String] {
        let table: [Int: (String, String, String, String)] = [
            1: ("11.0", "10.13", "11.0", "4.0"), 2: ("11.2", "10.13.2", "11.2", "4.2"), 3: ("12.0", "10.14", "12.0", "5.0"),
            4: ("13.0", "10.15", "13.0", "6.0"), 5: ("14.0", "11.0", "14.0", "7.0"), 6: ("15.0", "12.0", "15.0", "8.0"),
            7: ("16.0", "13.0", "16.0", "9.0"), 8: ("17.0", "14.0", "17.0", "10.0"), 9: ("18.0", "15.0", "18.0", "11.0"),
            10: ("26.0", "26.0", "26.0", "26.0"),
        ]
        guard let t = table[v] else { return [:] }
        return ["iOS": t.0, "macOS": t.1, "tvOS": t.2, "watchOS": t.3]
    }

    static func kindGloss(_ m: Spec.Model) -> String {
        switch m.kind {
        case .neuralNetwork?: return " (neural network)"
        case .neuralNetworkClassifier?: return " (neural network classifier)"
        case .neuralNetworkRegressor?: return " (neural network regressor)"
        case .mlProgram?: return " (ML program)"
        case .pipeline?, .pipelineClassifier?, .pipelineRegressor?: return " (pipeline)"
        case .treeEnsembleClassifier?, .treeEnsembleRegressor?: return " (tree ensemble)"
        case .glmClassifier?, .glmRegressor?: return " (generalized linear model)"
        case .supportVectorClassifier?, .supportVectorRegressor?: return " (support vector machine)"
        case .kNearestNeighborsClassifier?: return " (k-nearest neighbors)"
        case .textClassifier?, .wordTagger?: return " (Create ML natural language model)"
        case .visionFeaturePrint?, .audioFeaturePrint?: return " (Apple feature extractor)"
        default: return ""
        }
    }

    static func oneLine(_ s: String) -> String {
        let t = s.replacingOccurrences(of: "\n", with: " ")
        return t.count > 200 ? String(t.prefix(197)) + "…" : t
    }

    static func byteString(_ n: Int) -> String {
        if n >= 1 << 20 { return String(format: "%.1f MB", Double(n) / 1_048_576) }
        if n >= 1 << 10 { return String(format: "%.1f KB", Double(n) / 1024) }
        return "\(n) bytes"
    }

    /// 552003 → "552,003".
    static func grouped(_ n: Int) -> String {
        let s = String(n.magnitude)
        var out = ""
        for (i, ch) in s.enumerated() {
            if i > 0 && (s.count - i) % 3 == 0 { out.append(",") }
            out.append(ch)
        }
        return (n < 0 ? "-" : "") + out
    }

    static func directorySize(_ path: String) -> Int {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else { return 0 }
        if !isDir.boolValue { return (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0 }
        var total = 0
        if let e = FileManager.default.enumerator(atPath: path) {
            while let f = e.nextObject() as? String {
                let full = (path as NSString).appendingPathComponent(f)
                if let a = try? FileManager.default.attributesOfItem(atPath: full), a[.type] as? FileAttributeType == .typeRegular {
                    total += a[.size] as? Int ?? 0
                }
            }
        }
        return total
    }

    static func relative(_ p: String, to base: String) -> String {
        let b = base.hasSuffix("/") ? base : base + "/"
        return p.hasPrefix(b) ? String(p.dropFirst(b.count)) : p
    }

    /// "a ×3, b ×1" in the given order.
    static func histogramText(_ h: [(String, Int)]) -> String {
        h.map { "\($0.0) ×\($0.1)" }.joined(separator: ", ")
    }
}
