// The neural-network part of a Core ML report.
import Foundation

enum NeuralNetworkInspection {
    /// One weight tensor of a layer: its role, storage and element count.
    struct WeightInfo {
        var role: String
        var params: Spec.WeightParams
        var count: Int
        var precision: String
    }

    static func describe(_ n: Spec.NeuralNetwork, classifier: Spec.NeuralNetworkClassifier?, model: Spec.Model,
                         fileName: String, notes: inout [String]) -> CoreMLInspector.Section {
        var s = CoreMLInspector.Section()
        var json: [String: Any] = [:]
        let layers = n.layers

        // Layer types in order of count, ties by first appearance.
        var typeCounts: [String: Int] = [:], typeOrder: [String] = []
        var customCounts: [String: Int] = [:], customOrder: [String] = []
        var precisionCounts: [String: Int] = [:], precisionOrder: [String] = []
        var totalParams = 0
        var updatableLayers = 0
        var layerItems: [[String: Any]] = []
        var layerLines: [String] = []
        var layerRows: [(Int, String, String, String, Int, String)] = []
        var needs: [(Int, String)] = []  // (minimum spec version, why)
        for (i, l) in layers.enumerated() {
            let type = l.layer.typeName
            if typeCounts[type] == nil { typeOrder.append(type) }
            typeCounts[type, default: 0] += 1
            if l.isUpdatable { updatableLayers += 1 }
            let ws = (try? weights(of: l)) ?? []  // values out of range: CoreMLInspector.validate threw first
            var precisions: [String] = []
            var params = 0
            for w in ws {
                params += w.count
                if !precisions.contains(w.precision) { precisions.append(w.precision) }
                let key = w.params.isUpdatable ? "updatable" : w.precision
                if precisionCounts[w.precision] == nil { precisionOrder.append(w.precision) }
                precisionCounts[w.precision, default: 0] += 1
                if w.params.isUpdatable {
                    if precisionCounts[key] == nil { precisionOrder.append(key) }
                    precisionCounts[key, default: 0] += 1
                }
                switch w.params.storage {
                case .float16: needs.append((2, "fp16 weights"))
                case .quantized: needs.append((3, "quantized weights"))
                case .int8: needs.append((5, "int8 weights"))
                default: break
                }
            }
            totalParams += params
            var item: [String: Any] = ["name": l.name, "type": type, "inputs": l.input, "outputs": l.output,
                                       "summary": summary(l), "parameterCount": params]
            if !precisions.isEmpty { item["precision"] = precisions.joined(separator: " + ") }
            if case let .custom(p) = l.layer {
                item["className"] = p.className
                if !p.description.isEmpty { item["description"] = p.description }
                if customCounts[p.className] == nil { customOrder.append(p.className) }
                customCounts[p.className, default: 0] += 1
                needs.append((2, "custom layers"))
            }
            if l.isUpdatable { item["isUpdatable"] = true }
            if l.layer.fieldNumber >= 600 && l.layer.fieldNumber != 0 { needs.append((4, "rank-N (NeuralNetwork v2) layers")) }
            layerItems.append(item)
            layerRows.append((i + 1, l.name, type, summary(l), params, precisions.joined(separator: " + ")))
        }
        let nameWidth = min(32, layerRows.map(\.1.count).max() ?? 0)
        let typeWidth = min(24, layerRows.map(\.2.count).max() ?? 0)
        for r in layerRows {
            var line = String(format: "    %3d  ", r.0) + r.1.padding(toLength: max(nameWidth, r.1.count), withPad: " ", startingAt: 0)
                + "  " + r.2.padding(toLength: max(typeWidth, r.2.count), withPad: " ", startingAt: 0) + "  " + r.3
            if r.4 > 0 { line += "  (\(CoreMLInspector.grouped(r.4)) params\(r.5.isEmpty ? "" : ", " + r.5))" }
            while line.hasSuffix(" ") { line.removeLast() }
            layerLines.append(line)
        }
        let typeHist = typeOrder.enumerated().sorted { a, b in
            let (ca, cb) = (typeCounts[a.element]!, typeCounts[b.element]!)
            return ca != cb ? ca > cb : a.offset < b.offset
        }.map { ($0.element, typeCounts[$0.element]!) }

        json["layerCount"] = layers.count
        json["layerTypes"] = typeCounts
        json["layerTypeOrder"] = typeHist.map(\.0)
        json["parameterCount"] = totalParams
        json["weightPrecision"] = precisionCounts
        json["layers"] = layerItems
        json["arrayInputShapeMapping"] = n.arrayInputShapeMapping == .exact ? "EXACT_ARRAY_MAPPING" : "RANK5_ARRAY_MAPPING"
        json["imageInputShapeMapping"] = n.imageInputShapeMapping == .rank4 ? "RANK4_IMAGE_MAPPING" : "RANK5_IMAGE_MAPPING"
        if !customCounts.isEmpty { json["customLayerClassNames"] = customCounts }
        if updatableLayers > 0 { json["updatableLayerCount"] = updatableLayers }
        json["hasUpdateParameters"] = n.updateParams != nil

        let title = classifier != nil ? "Neural network classifier" : model.kind == .neuralNetworkRegressor ? "Neural network regressor" : "Neural network"
        s.lines.append("")
        s.lines.append("  \(title): \(layers.count) layer\(layers.count == 1 ? "" : "s"), \(CoreMLInspector.grouped(totalParams)) parameters"
            + (precisionOrder.isEmpty ? "" : ", weights " + CoreMLInspector.histogramText(precisionOrder.map { ($0, precisionCounts[$0]!) })))

        // Preprocessing.
        var pre: [[String: Any]] = []
        for p in n.preprocessing {
            var j: [String: Any] = ["featureName": p.featureName]
            var text = "    \(p.featureName.isEmpty ? "(all images)" : p.featureName): "
            switch p.preprocessor {
            case let .scaler(sc)?:
                j["type"] = "scaler"
                j["channelScale"] = Double(sc.channelScale)
                j["redBias"] = Double(sc.redBias); j["greenBias"] = Double(sc.greenBias)
                j["blueBias"] = Double(sc.blueBias); j["grayBias"] = Double(sc.grayBias)
                text += "scale \(sc.channelScale), bias R \(sc.redBias) G \(sc.greenBias) B \(sc.blueBias) gray \(sc.grayBias)"
            case let .meanImage(m)?:
                j["type"] = "meanImage"
                j["valueCount"] = m.count
                if !m.isEmpty {
                    j["min"] = Double(m.min()!); j["max"] = Double(m.max()!)
                    text += "mean image of \(m.count) values (\(m.min()!)…\(m.max()!)) subtracted"
                } else {
                    text += "empty mean image"
                }
            case nil:
                j["type"] = "none"
                text += "no preprocessor set"
            }
            if pre.isEmpty { s.lines.append("  Preprocessing:") }
            pre.append(j)
            s.lines.append(text)
        }
        json["preprocessing"] = pre
        if pre.isEmpty, model.description?.input.contains(where: { if case .image? = $0.type?.kind { return true } else { return false } }) == true {
            s.lines.append("  Preprocessing: none (images enter as raw 0–255 values)")
        }
        s.lines.append("  Layer types:   " + CoreMLInspector.histogramText(typeHist))
        if !customOrder.isEmpty {
            s.lines.append("  Custom layers: " + CoreMLInspector.histogramText(customOrder.map { ($0, customCounts[$0]!) })
                + " (implementations must be provided by the app, or registered with mlconv's runtime)")
        }
        if updatableLayers > 0 || n.updateParams != nil {
            var line = "  On-device training: \(updatableLayers) updatable layer\(updatableLayers == 1 ? "" : "s")"
            do {
                if let u = try n.updateParameters(file: fileName) {
                    let (text, j) = Self.updateSummary(u)
                    line += "; " + text
                    json["updateParameters"] = j
                }
            } catch {
                line += "; update parameters unreadable: \(error)"
            }
            s.lines.append(line)
        }
        if n.arrayInputShapeMapping == .exact || n.imageInputShapeMapping == .rank4 {
            s.lines.append("  Shape mapping: arrays \(json["arrayInputShapeMapping"]!), images \(json["imageInputShapeMapping"]!)")
        }

        // Class labels.
        if let c = classifier {
            switch c.classLabels {
            case let .strings(v)?:
                json["classLabels"] = ["count": v.count, "type": "string", "first": Array(v.prefix(10))] as [String: Any]
                s.lines.append("  Class labels:  \(v.count) strings: " + v.prefix(8).map { "\"\($0)\"" }.joined(separator: ", ") + (v.count > 8 ? ", …" : ""))
            case let .int64s(v)?:
                json["classLabels"] = ["count": v.count, "type": "int64", "first": Array(v.prefix(10)).map { Int($0) }] as [String: Any]
                s.lines.append("  Class labels:  \(v.count) integers: " + v.prefix(8).map(String.init).joined(separator: ", ") + (v.count > 8 ? ", …" : ""))
            case nil:
                s.lines.append("  Class labels:  none")
            }
            if !c.labelProbabilityLayerName.isEmpty {
                json["labelProbabilityLayerName"] = c.labelProbabilityLayerName
                s.lines.append("  Probabilities from layer: \(c.labelProbabilityLayerName)")
            }
        }

        s.lines.append("  Layers:")
        s.lines += layerLines
        let recurrent = RecurrentInspection.describe(n, model: model)
        if !recurrent.json.isEmpty {
            json["recurrentLayers"] = recurrent.json
            s.lines += recurrent.lines
        }

        // Spec version consistency.
        let v = Int(model.specificationVersion)
        var seen = Set<String>()
        for (need, why) in needs.sorted(by: { $0.0 > $1.0 }) where need > v && seen.insert(why).inserted {
            notes.append("the network uses \(why), which need specificationVersion ≥ \(need), but the model declares \(v)")
        }

        // What mlconv can do with it.
        var mlconv: [String: Any] = ["customLayerClassNames": customOrder]
        do {
            let r = try CoreMLImporter.importModel(model, fileName: fileName)
            mlconv["canImport"] = true
            mlconv["canRun"] = customOrder.isEmpty
            mlconv["irNodeCount"] = r.graph.nodes.count
            if !r.warnings.isEmpty { mlconv["warnings"] = r.warnings }
            var summary = "imports into mlconv's graph (\(r.graph.nodes.count) node\(r.graph.nodes.count == 1 ? "" : "s"))"
            if !customOrder.isEmpty {
                let builtIn = ["ResCropBlockLambda", "RescaleOutputLambda"]
                let missing = customOrder.filter { !builtIn.contains($0) }
                mlconv["canRun"] = missing.isEmpty
                summary += missing.isEmpty
                    ? "; its custom layers are built into mlconv's runtime"
                    : "; runs once implementations of \(missing.joined(separator: ", ")) are registered (CustomLayerRegistry)"
            }
            mlconv["summary"] = summary
            s.lines.append("")
            s.lines.append("  mlconv: \(summary)")
            for w in r.warnings { s.lines.append("    warning: \(w)") }
        } catch let e as CoreMLImportError {
            mlconv["canImport"] = false
            mlconv["canRun"] = false
            let problems = e.problems
            if !problems.isEmpty {
                mlconv["unsupportedLayers"] = problems.map { ["layer": $0.layer, "type": $0.type, "reason": $0.reason] }
                var byType: [String: Int] = [:], order: [String] = []
                for p in problems { if byType[p.type] == nil { order.append(p.type) }; byType[p.type, default: 0] += 1 }
                let summary = "cannot import: \(problems.count) unsupported layer\(problems.count == 1 ? "" : "s") ("
                    + CoreMLInspector.histogramText(order.map { ($0, byType[$0]!) }) + ")"
                mlconv["summary"] = summary
                s.lines.append("")
                s.lines.append("  mlconv: \(summary)")
                for p in problems.prefix(10) { s.lines.append("    - \(p)") }
                if problems.count > 10 { s.lines.append("    … and \(problems.count - 10) more (see --json)") }
            } else {
                mlconv["summary"] = "cannot import: \(e)"
                s.lines.append("")
                s.lines.append("  mlconv: cannot import: \(e)")
            }
        } catch {
            mlconv["canImport"] = false
            mlconv["canRun"] = false
            mlconv["summary"] = "cannot import: \(error)"
            s.lines.append("")
            s.lines.append("  mlconv: cannot import: \(error)")
        }
        s.json["neuralNetwork"] = json
        if let labels = json["classLabels"] { s.json["classLabels"] = labels }
        s.json["mlconv"] = mlconv
        return s
    }

    // MARK: - Weights of a layer

    /// The weights of `l` with their value counts.
    /// - Throws: `LayerImportFailure` (from `Checked`) when a size field is out of range or the
    ///   expected count overflows.
    static func weights(of l: Spec.NeuralNetworkLayer) throws -> [WeightInfo] {
        var out: [WeightInfo] = []
        func count<T: BinaryInteger>(_ v: T, _ field: String) throws -> Int { try Checked.int(v, field) }
        func product<T: BinaryInteger>(_ v: [T], _ field: String) throws -> Int { try Checked.product(of: v, field) }
        func add(_ role: String, _ w: Spec.WeightParams?, _ expected: Int? = nil) throws {
            guard let w, w.storage != .empty else { return }
            if w.storage == .quantized, let q = w.quantization { _ = try Checked.int(q.numberOfBits, "\(role) numberOfBits", in: 0...64) }
            let count: Int
            if let e = expected, e > 0, w.storage == .quantized { count = e } else { count = w.storedElementCount }
            out.append(WeightInfo(role: role, params: w, count: count, precision: WeightImport.precisionName(w)))
        }
        switch l.layer {
        case let .convolution(p):
            let k = p.kernelSize.isEmpty ? 9 : try product(p.kernelSize, "kernelSize")
            let g = Swift.max(1, try count(p.nGroups, "nGroups"))
            let cout = try count(p.outputChannels, "outputChannels"), kc = try count(p.kernelChannels, "kernelChannels")
            let n = try Checked.product(p.isDeconvolution ? [kc, cout / g, k] : [cout, kc, k], "weight count")
            try add("weights", p.weights, n)
            try add("bias", p.bias, cout)
        case let .innerProduct(p):
            try add("weights", p.weights, product([p.inputChannels, p.outputChannels], "inputChannels·outputChannels"))
            try add("bias", p.bias, count(p.outputChannels, "outputChannels"))
        case let .embedding(p):
            try add("weights", p.weights, product([p.inputDim, p.outputChannels], "inputDim·outputChannels"))
            try add("bias", p.bias, count(p.outputChannels, "outputChannels"))
        case let .embeddingND(p):
            try add("weights", p.weights, product([p.vocabSize, p.embeddingSize], "vocabSize·embeddingSize"))
            try add("bias", p.bias, count(p.embeddingSize, "embeddingSize"))
        case let .batchnorm(p):
            let c = try count(p.channels, "channels")
            try add("gamma", p.gamma, c); try add("beta", p.beta, c); try add("mean", p.mean, c); try add("variance", p.variance, c)
        case let .scale(p):
            try add("scale", p.scale, product(p.shapeScale, "shapeScale"))
            try add("bias", p.bias, product(p.shapeBias, "shapeBias"))
        case let .bias(p):
            try add("bias", p.bias, product(p.shape, "shape"))
        case let .loadConstant(p), let .loadConstantND(p):
            try add("data", p.data, product(p.shape, "shape"))
        case let .activation(a):
            switch a.nonlinearity {
            case let .preLU(alpha): try add("alpha", alpha)
            case let .parametricSoftplus(alpha, beta): try add("alpha", alpha); try add("beta", beta)
            default: break
            }
        case let .custom(p):
            for (i, w) in p.weights.enumerated() { try add("w\(i)", w) }
        case let .batchedMatmul(p):
            try add("weights", p.weights, product([p.weightMatrixFirstDimension, p.weightMatrixSecondDimension],
                                                  "weightMatrixFirstDimension·weightMatrixSecondDimension"))
            try add("bias", p.bias, count(p.weightMatrixSecondDimension, "weightMatrixSecondDimension"))
        case let .layerNormalization(p):
            try add("gamma", p.gamma); try add("beta", p.beta)
        case let .simpleRecurrent(p):
            _ = try (count(p.inputVectorSize, "inputVectorSize"), count(p.outputVectorSize, "outputVectorSize"))
            try add("weightMatrix", p.weightMatrix); try add("recursionMatrix", p.recursionMatrix); try add("biasVector", p.biasVector)
        case let .gru(p):
            _ = try (count(p.inputVectorSize, "inputVectorSize"), count(p.outputVectorSize, "outputVectorSize"))
            for (r, w) in [("updateGateWeightMatrix", p.updateGateWeightMatrix), ("resetGateWeightMatrix", p.resetGateWeightMatrix),
                           ("outputGateWeightMatrix", p.outputGateWeightMatrix), ("updateGateRecursionMatrix", p.updateGateRecursionMatrix),
                           ("resetGateRecursionMatrix", p.resetGateRecursionMatrix), ("outputGateRecursionMatrix", p.outputGateRecursionMatrix),
                           ("updateGateBiasVector", p.updateGateBiasVector), ("resetGateBiasVector", p.resetGateBiasVector),
                           ("outputGateBiasVector", p.outputGateBiasVector)] { try add(r, w) }
        case let .uniDirectionalLSTM(p):
            _ = try (count(p.inputVectorSize, "inputVectorSize"), count(p.outputVectorSize, "outputVectorSize"))
            if let w = p.weightParams { try lstm(w, prefix: "", add) }
        case let .biDirectionalLSTM(p):
            _ = try (count(p.inputVectorSize, "inputVectorSize"), count(p.outputVectorSize, "outputVectorSize"))
            for (i, w) in p.weightParams.enumerated() { try lstm(w, prefix: i == 0 ? "forward." : "backward.", add) }
        default: break
        }
        return out
    }

    private static func lstm(_ w: Spec.LSTMWeightParams, prefix: String, _ add: (String, Spec.WeightParams?, Int?) throws -> Void) throws {
        let all: [(String, Spec.WeightParams?)] = [
            ("inputGateWeightMatrix", w.inputGateWeightMatrix), ("forgetGateWeightMatrix", w.forgetGateWeightMatrix),
            ("blockInputWeightMatrix", w.blockInputWeightMatrix), ("outputGateWeightMatrix", w.outputGateWeightMatrix),
            ("inputGateRecursionMatrix", w.inputGateRecursionMatrix), ("forgetGateRecursionMatrix", w.forgetGateRecursionMatrix),
            ("blockInputRecursionMatrix", w.blockInputRecursionMatrix), ("outputGateRecursionMatrix", w.outputGateRecursionMatrix),
            ("inputGateBiasVector", w.inputGateBiasVector), ("forgetGateBiasVector", w.forgetGateBiasVector),
            ("blockInputBiasVector", w.blockInputBiasVector), ("outputGateBiasVector", w.outputGateBiasVector),
            ("inputGatePeepholeVector", w.inputGatePeepholeVector), ("forgetGatePeepholeVector", w.forgetGatePeepholeVector),
            ("outputGatePeepholeVector", w.outputGatePeepholeVector),
        ]
        for (r, p) in all { try add(prefix + r, p, nil) }
    }

    // MARK: - One-line layer summaries

    static func summary(_ l: Spec.NeuralNetworkLayer) -> String {
        func pad(_ p: Spec.ConvolutionLayerParams.Padding?) -> String {
            switch p {
            case nil: return "valid"
            case let .valid(v)?:
                let e = v.paddingAmounts?.borderAmounts ?? []
                if e.allSatisfy({ $0.startEdgeSize == 0 && $0.endEdgeSize == 0 }) { return "valid" }
                return "pad " + e.map { "\($0.startEdgeSize)/\($0.endEdgeSize)" }.joined(separator: ",")
            case let .same(m)?: return m.asymmetryMode == .topLeftHeavy ? "same (top-left heavy)" : "same"
            }
        }
        func dims(_ v: [UInt64], _ def: String) -> String { v.isEmpty ? def : v.map(String.init).joined(separator: "×") }
        switch l.layer {
        case let .convolution(p):
            var s = "\(p.isDeconvolution ? "deconv " : "")\(dims(p.kernelSize, "3×3")) \(p.kernelChannels.multipliedReportingOverflow(by: Swift.max(1, p.nGroups)).partialValue)→\(p.outputChannels)"
            if !p.stride.isEmpty && p.stride.contains(where: { $0 != 1 }) { s += " stride \(dims(p.stride, "1"))" }
            if !p.dilationFactor.isEmpty && p.dilationFactor.contains(where: { $0 != 1 }) { s += " dilation \(dims(p.dilationFactor, "1"))" }
            if p.nGroups > 1 { s += " groups \(p.nGroups)" }
            s += " \(pad(p.padding))"
            if p.hasBias { s += " +bias" }
            return s
        case let .pooling(p):
            let kind = p.type == .max ? "max" : p.type == .average ? "average" : "L2"
            if p.globalPooling { return "global \(kind)" }
            var s = "\(kind) \(dims(p.kernelSize, "3×3")) stride \(dims(p.stride, "1"))"
            switch p.padding {
            case let .same(m)?: s += m.asymmetryMode == .topLeftHeavy ? " same (top-left heavy)" : " same"
            case .includeLastPixel?: s += " include-last-pixel"
            default: s += " valid"
            }
            return s
        case let .activation(a):
            switch a.nonlinearity {
            case let .linear(al, b): return "linear \(al)·x + \(b)"
            case let .leakyReLU(al): return "leakyReLU \(al)"
            case let .elu(al): return "ELU \(al)"
            case let .thresholdedReLU(al): return "thresholdedReLU \(al)"
            case let .scaledTanh(al, b): return "scaledTanh \(al)·tanh(\(b)·x)"
            case let .sigmoidHard(al, b): return "sigmoidHard \(al)·x + \(b)"
            default: return a.nonlinearity.name
            }
        case let .innerProduct(p): return "\(p.inputChannels)→\(p.outputChannels)\(p.hasBias ? " +bias" : "")\(p.int8DynamicQuantize ? " int8 dynamic" : "")"
        case let .batchnorm(p): return "\(p.channels) channels, ε \(p.epsilon)\(p.computeMeanVar ? ", computes mean/var" : "")"
        case let .custom(p): return "class \(p.className)" + (p.description.isEmpty ? "" : " (\(CoreMLInspector.oneLine(p.description)))")
        case let .padding(p):
            let e = p.paddingAmounts?.borderAmounts.map { "\($0.startEdgeSize)/\($0.endEdgeSize)" }.joined(separator: ",") ?? "0"
            switch p.paddingType {
            case let .constant(v)?: return "constant \(v.value), \(e)"
            case .reflection?: return "reflection, \(e)"
            case .replication?: return "replication, \(e)"
            case nil: return e
            }
        case let .upsample(p):
            let mode = p.mode == .bilinear ? "bilinear" : "nearest"
            return "×\(dims(p.scalingFactor, "1")) \(mode)"
        case let .resizeBilinear(p):
            let modes = ["strict align endpoints", "align endpoints", "upsample", "ROI align"]
            let m = p.mode.map { Int($0.samplingMethod.rawValue) < modes.count ? modes[Int($0.samplingMethod.rawValue)] : "mode \($0.samplingMethod.rawValue)" } ?? "strict align endpoints"
            return "to \(dims(p.targetSize, "?")), \(m)"
        case let .add(a) where a != 0: return "alpha \(a)"
        case let .multiply(a) where a != 0: return "alpha \(a)"
        case let .flatten(mode): return mode == .channelLast ? "channel last" : "channel first"
        case let .reshape(p): return "to \(p.targetShape.map(String.init).joined(separator: "×"))\(p.mode == .channelLast ? " channel last" : "")"
        case let .permute(axis): return "axes \(axis)"
        case let .concat(seq): return seq ? "sequence axis" : "channels"
        case let .unary(u): return LayerImporter.unaryName(u.type)
        case let .reshapeStatic(t): return "to \(t.map(String.init).joined(separator: "×"))"
        case let .softmaxND(axis): return "axis \(axis)"
        case let .transpose(axes): return "axes \(axes)"
        case let .uniDirectionalLSTM(p): return "\(p.inputVectorSize)→\(p.outputVectorSize)"
        case let .biDirectionalLSTM(p): return "\(p.inputVectorSize)→\(p.outputVectorSize)"
        case let .gru(p): return "\(p.inputVectorSize)→\(p.outputVectorSize)"
        case let .simpleRecurrent(p): return "\(p.inputVectorSize)→\(p.outputVectorSize)"
        default: return ""
        }
    }

    /// One line and a JSON object for `NetworkUpdateParameters`: losses, optimizer with its
    /// hyper-parameters (default values), epochs, shuffle and seed.
    static func updateSummary(_ u: Spec.NetworkUpdateParameters) -> (String, [String: Any]) {
        var parts: [String] = []
        var j: [String: Any] = [:]
        let losses: [String] = u.lossLayers.map { l in
            switch l.lossLayerType {
            case let .categoricalCrossEntropyLossLayer(c)?: return "categoricalCrossEntropy(\(c.input) vs \(c.target))"
            case let .meanSquaredErrorLossLayer(m)?: return "meanSquaredError(\(m.input) vs \(m.target))"
            case nil: return "\(l.name): no loss type"
            }
        }
        j["losses"] = losses
        parts.append(losses.isEmpty ? "no loss layer" : "loss " + losses.joined(separator: ", "))
        func d(_ p: Spec.DoubleParameter?) -> String { p.map { String(format: "%g", $0.defaultValue) } ?? "unset" }
        func i(_ p: Spec.Int64Parameter?) -> String { p.map { String($0.defaultValue) } ?? "unset" }
        switch u.optimizer?.optimizerType {
        case let .sgdOptimizer(o)?:
            parts.append("SGD lr \(d(o.learningRate)), batch \(i(o.miniBatchSize)), momentum \(d(o.momentum))")
            j["optimizer"] = ["kind": "sgd", "learningRate": d(o.learningRate), "miniBatchSize": i(o.miniBatchSize), "momentum": d(o.momentum)]
        case let .adamOptimizer(o)?:
            parts.append("Adam lr \(d(o.learningRate)), batch \(i(o.miniBatchSize)), beta1 \(d(o.beta1)), beta2 \(d(o.beta2)), eps \(d(o.eps))")
            j["optimizer"] = ["kind": "adam", "learningRate": d(o.learningRate), "miniBatchSize": i(o.miniBatchSize),
                              "beta1": d(o.beta1), "beta2": d(o.beta2), "eps": d(o.eps)]
        case nil:
            parts.append("no optimizer")
        }
        parts.append("epochs \(i(u.epochs))")
        j["epochs"] = i(u.epochs)
        if let sh = u.shuffle { parts.append("shuffle \(sh.defaultValue ? "on" : "off")"); j["shuffle"] = sh.defaultValue }
        if let seed = u.seed { parts.append("seed \(seed.defaultValue)"); j["seed"] = seed.defaultValue }
        return (parts.joined(separator: ", "), j)
    }
}
