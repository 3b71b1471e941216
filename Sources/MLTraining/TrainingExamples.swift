// Training rows (feature values) → graph feeds and loss targets.
import CoreMLFormat
import MLGraph
import MLPrediction

/// One example in the graph's layout: per-sample values of each required graph input, and the target.
struct PreparedExample {
    var feeds: [String: [Float]]
    var target: LossTarget
}

enum ExamplePreparation {
    /// Converts `rows` for `network`: multi-array inputs give their values in Core ML's order
    /// ([C], [C, H, W]; the graph's own transpose makes them NHWC), images their 0–255 pixels
    /// [H, W, C] in the declared colour order; the target becomes a class index (classifier label
    /// or an integer value) or the values the MSE loss compares with (a [C, H, W] target of an
    /// NHWC loss input is transposed to [H, W, C]).
    static func prepare(_ rows: [FeatureProvider], network: TrainableNetwork, description d: NetworkUpdateDescription,
                        model: String) throws -> [PreparedExample] {
        let inputs = network.requiredInputs
        let lossShape = Array((network.graph.tensorTypes[network.lossInput]?.shape ?? []).dropFirst())
        let lossCount = lossShape.reduce(1, *)
        return try rows.enumerated().map { i, row in
            var feeds: [String: [Float]] = [:]
            for input in inputs {
                let per = input.type.shape.dropFirst().reduce(1, *)
                guard let v = row[input.name] else {
                    throw TrainingError.invalidExample(model: model, example: i, feature: input.name, reason: "the feature is missing")
                }
                let values: [Float]
                switch v {
                case let .multiArray(a): values = a.values.map { Float($0) }
                case let .double(x): values = [Float(x)]
                case let .int64(x): values = [Float(x)]
                case let .image(img): values = img.pixels.map { Float($0) }
                default:
                    throw TrainingError.invalidExample(model: model, example: i, feature: input.name,
                                                       reason: "a \(v.typeName) cannot feed the network")
                }
                guard values.count == per else {
                    throw TrainingError.invalidExample(model: model, example: i, feature: input.name,
                        reason: "has \(values.count) values; the network takes \(per) (shape \(Array(input.type.shape.dropFirst())))")
                }
                feeds[input.name] = values
            }
            guard let t = row[d.targetFeature] else {
                throw TrainingError.invalidExample(model: model, example: i, feature: d.targetFeature, reason: "the training target is missing")
            }
            let target: LossTarget
            switch d.loss {
            case .categoricalCrossEntropy:
                if let labels = d.classLabels {
                    let key: String?
                    switch t {
                    case let .string(s): key = s
                    case let .int64(x): key = String(x)
                    default: key = nil
                    }
                    guard let k = key, let idx = labels.firstIndex(of: k) else {
                        throw TrainingError.invalidExample(model: model, example: i, feature: d.targetFeature,
                            reason: "\(describe(t)) is not one of the class labels \(labels.prefix(20))"
                                + " (a neural network classifier cannot learn new classes; use a k-nearest-neighbours stage)")
                    }
                    target = .classIndex(idx)
                } else {
                    let x: Double?
                    switch t {
                    case let .int64(v): x = Double(v)
                    case let .double(v): x = v
                    case let .multiArray(a) where a.values.count == 1: x = a.values[0]
                    default: x = nil
                    }
                    guard let x, x >= 0, x < Double(lossCount), x == x.rounded(), let idx = Int(exactly: x) else {
                        throw TrainingError.invalidExample(model: model, example: i, feature: d.targetFeature,
                            reason: "expected a class index 0…\(lossCount - 1), found \(describe(t))")
                    }
                    target = .classIndex(idx)
                }
            case .meanSquaredError:
                var values: [Float]
                switch t {
                case let .multiArray(a): values = a.values.map { Float($0) }
                case let .double(x): values = [Float(x)]
                case let .int64(x): values = [Float(x)]
                default:
                    throw TrainingError.invalidExample(model: model, example: i, feature: d.targetFeature,
                                                       reason: "a \(t.typeName) cannot be a regression target")
                }
                guard values.count == lossCount else {
                    throw TrainingError.invalidExample(model: model, example: i, feature: d.targetFeature,
                        reason: "has \(values.count) values; the loss input '\(d.lossInput)' has \(lossCount)")
                }
                if lossShape.count == 3 {  // NHWC loss input, target given [C, H, W]
                    let (h, w, c) = (lossShape[0], lossShape[1], lossShape[2])
                    var hwc = values
                    for ch in 0..<c { for y in 0..<h { for x in 0..<w { hwc[(y * w + x) * c + ch] = values[(ch * h + y) * w + x] } } }
                    values = hwc
                }
                target = .values(values)
            }
            return PreparedExample(feeds: feeds, target: target)
        }
    }

    /// Stacks the examples at `indices` into [N, …] feeds.
    static func batch(_ examples: [PreparedExample], _ indices: ArraySlice<Int>, inputs: [ValueInfo]) -> [String: TrainTensor] {
        var out: [String: TrainTensor] = [:]
        for input in inputs {
            var values: [Float] = []
            for i in indices { values += examples[i].feeds[input.name] ?? [] }
            out[input.name] = TrainTensor(shape: [indices.count] + input.type.shape.dropFirst(), values: values)
        }
        return out
    }
}

/// A short rendering of a feature value for messages.
func describe(_ v: FeatureValue) -> String {
    switch v {
    case let .string(s): return "\"\(s)\""
    case let .int64(x): return "\(x)"
    case let .double(x): return "\(x)"
    case let .multiArray(a): return "a multi-array of shape \(a.shape)"
    default: return "a \(v.typeName)"
    }
}
