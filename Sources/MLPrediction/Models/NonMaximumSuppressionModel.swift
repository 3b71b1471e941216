// Core ML `NonMaximumSuppression` (NonMaximumSuppression.proto).
import CoreMLFormat
import Foundation

/// Non-maximum suppression of axis-aligned boxes, the PickTop method of NonMaximumSuppression.proto.
///
/// Inputs: `confidence` [N, C] (row = box, column = class) and `coordinates` [N, 4], each row
/// (x, y, width, height) with (x, y) the box centre (a leading dimension of 1, [1, N, C], is
/// accepted and kept). Optional Double inputs override `iouThreshold` and
/// `confidenceThreshold` when the model names them and they are given.
///
/// Algorithm (the proto's):
/// 1. a box's confidence is its largest class confidence, its label that class (first on ties);
///    boxes whose confidence is below `confidenceThreshold` are dropped;
/// 2. the rest are ordered by descending confidence (input order on ties);
/// 3. the first is kept, and every later box whose IOU with it exceeds `iouThreshold` is
///    suppressed (with `perClass`, only boxes of the same label); repeat with the next box
///    neither kept nor suppressed. (The proto's wording "IOU less than" contradicts its own
///    note that a threshold of 1.0 means no suppression; suppression is for IOU > threshold.)
///
/// Outputs: the kept rows of `confidence` and `coordinates`, in that order, in the inputs' data
/// type. When an output's first dimension is fixed by its description (a fixed shape, or a
/// `shapeRange` lower bound), the rows are zero-padded up to it; a range's upper bound (or a fixed
/// size) truncates.
public struct NonMaximumSuppressionModel: FeatureModel {
    public struct Parameters: Equatable, Sendable {
        public var iouThreshold: Double
        public var confidenceThreshold: Double
        public var perClass: Bool
        public var confidenceInputFeatureName: String
        public var coordinatesInputFeatureName: String
        /// Empty: not overridable.
        public var iouThresholdInputFeatureName: String
        public var confidenceThresholdInputFeatureName: String
        public var confidenceOutputFeatureName: String
        public var coordinatesOutputFeatureName: String
        /// Optional labels (only for Vision; not used by the computation).
        public var classLabels: ClassLabels?

        public init(iouThreshold: Double, confidenceThreshold: Double, perClass: Bool = false,
                    confidenceInputFeatureName: String = "confidence", coordinatesInputFeatureName: String = "coordinates",
                    iouThresholdInputFeatureName: String = "", confidenceThresholdInputFeatureName: String = "",
                    confidenceOutputFeatureName: String = "confidence", coordinatesOutputFeatureName: String = "coordinates",
                    classLabels: ClassLabels? = nil) {
            self.iouThreshold = iouThreshold
            self.confidenceThreshold = confidenceThreshold
            self.perClass = perClass
            self.confidenceInputFeatureName = confidenceInputFeatureName
            self.coordinatesInputFeatureName = coordinatesInputFeatureName
            self.iouThresholdInputFeatureName = iouThresholdInputFeatureName
            self.confidenceThresholdInputFeatureName = confidenceThresholdInputFeatureName
            self.confidenceOutputFeatureName = confidenceOutputFeatureName
            self.coordinatesOutputFeatureName = coordinatesOutputFeatureName
            self.classLabels = classLabels
        }
    }

    public let modelDescription: Spec.ModelDescription
    public let parameters: Parameters
    let signature: FeatureSignature
    /// Rows the outputs are padded to / truncated at, from the output descriptions.
    let minimumRows: Int
    let maximumRows: Int?

    /// - Throws: `FeatureError.invalidModel` when a threshold is out of range (IOU in 0…1,
    ///   confidence ≥ 0, as Core ML's validator), or a named feature is not in the description.
    public init(parameters: Parameters, description: Spec.ModelDescription?, name: String) throws {
        signature = FeatureSignature(modelName: name, description: description)
        modelDescription = signature.description
        guard parameters.iouThreshold >= 0, parameters.iouThreshold <= 1 else {
            throw FeatureError.invalidModel(model: name, reason: "iouThreshold \(parameters.iouThreshold) must be in 0…1")
        }
        guard parameters.confidenceThreshold >= 0 else {
            throw FeatureError.invalidModel(model: name, reason: "confidenceThreshold \(parameters.confidenceThreshold) must be ≥ 0")
        }
        for (n, what) in [(parameters.confidenceInputFeatureName, "confidenceInputFeatureName"),
                          (parameters.coordinatesInputFeatureName, "coordinatesInputFeatureName")]
        where !signature.inputs.contains(where: { $0.name == n }) {
            throw FeatureError.invalidModel(model: name, reason: "\(what) '\(n)' is not an input of the model")
        }
        for (n, what) in [(parameters.confidenceOutputFeatureName, "confidenceOutputFeatureName"),
                          (parameters.coordinatesOutputFeatureName, "coordinatesOutputFeatureName")]
        where !signature.outputs.contains(where: { $0.name == n }) {
            throw FeatureError.invalidModel(model: name, reason: "\(what) '\(n)' is not an output of the model")
        }
        var lo = 0
        var hi: Int? = nil
        for n in [parameters.confidenceOutputFeatureName, parameters.coordinatesOutputFeatureName] {
            guard case let .multiArray(t)? = signature.outputs.first(where: { $0.name == n })?.type?.kind else { continue }
            switch t.shapeFlexibility {
            case let .shapeRange(r)? where !r.isEmpty:
                lo = max(lo, Int(clamping: min(r[0].lowerBound, UInt64(maximumFeatureVectorLength))))
                if r[0].upperBound >= 0 { hi = min(hi ?? Int.max, Int(clamping: r[0].upperBound)) }
            case nil where t.shape.count >= 2:
                let rowAxis = t.shape.count - 2
                if let rows = Int(exactly: t.shape[rowAxis]), rows > 0, rows <= maximumFeatureVectorLength {
                    lo = max(lo, rows)
                    hi = min(hi ?? Int.max, rows)
                }
            default: break
            }
        }
        minimumRows = lo
        maximumRows = hi
        self.parameters = parameters
    }

    /// IOU of two centre-based boxes (x, y, width, height); 0 when the union is empty.
    public static func iou(_ a: ArraySlice<Double>, _ b: ArraySlice<Double>) -> Double {
        let (ax, ay, aw, ah) = (a[a.startIndex], a[a.startIndex + 1], a[a.startIndex + 2], a[a.startIndex + 3])
        let (bx, by, bw, bh) = (b[b.startIndex], b[b.startIndex + 1], b[b.startIndex + 2], b[b.startIndex + 3])
        let iw = max(0, min(ax + aw / 2, bx + bw / 2) - max(ax - aw / 2, bx - bw / 2))
        let ih = max(0, min(ay + ah / 2, by + bh / 2) - max(ay - ah / 2, by - bh / 2))
        let inter = iw * ih
        let union = aw * ah + bw * bh - inter
        return union > 0 ? inter / union : 0
    }

    /// The indices of the kept boxes, in output order (see the type's documentation).
    /// - Parameters:
    ///   - confidence: N × C row-major.
    ///   - coordinates: N × 4 row-major.
    public static func keptBoxes(confidence: [Double], classes: Int, coordinates: [Double],
                                 iouThreshold: Double, confidenceThreshold: Double, perClass: Bool) -> [Int] {
        let n = classes > 0 ? confidence.count / classes : 0
        var score = [Double](repeating: 0, count: n)
        var label = [Int](repeating: 0, count: n)
        for i in 0..<n {
            var best = 0
            for c in 1..<max(classes, 1) where confidence[i * classes + c] > confidence[i * classes + best] { best = c }
            label[i] = best
            score[i] = confidence[i * classes + best]
        }
        let order = (0..<n).filter { score[$0] >= confidenceThreshold }
            .sorted { score[$0] != score[$1] ? score[$0] > score[$1] : $0 < $1 }
        var suppressed = Set<Int>()
        var kept: [Int] = []
        for (p, i) in order.enumerated() where !suppressed.contains(i) {
            kept.append(i)
            for j in order[(p + 1)...] where !suppressed.contains(j) && (!perClass || label[j] == label[i]) {
                if iou(coordinates[(4 * i)..<(4 * i + 4)], coordinates[(4 * j)..<(4 * j + 4)]) > iouThreshold {
                    suppressed.insert(j)
                }
            }
        }
        return kept
    }

    public func prediction(from inputs: FeatureProvider) throws -> FeatureProvider {
        let p = parameters
        let conf = try array(p.confidenceInputFeatureName, inputs)
        let coords = try array(p.coordinatesInputFeatureName, inputs)
        guard conf.shape.count >= 2, coords.shape.count >= 2, coords.shape.last == 4,
              conf.shape.dropLast().reduce(1, *) == coords.shape.dropLast().reduce(1, *) else {
            throw FeatureError.invalidValue(model: signature.modelName, feature: p.coordinatesInputFeatureName,
                reason: "confidence has shape \(conf.shape) and coordinates \(coords.shape); they must be [N, C] and [N, 4] with the same N")
        }
        let classes = conf.shape[conf.shape.count - 1]
        let iouT = try threshold(p.iouThresholdInputFeatureName, inputs) ?? p.iouThreshold
        let confT = try threshold(p.confidenceThresholdInputFeatureName, inputs) ?? p.confidenceThreshold
        var kept = Self.keptBoxes(confidence: conf.values, classes: classes, coordinates: coords.values,
                                  iouThreshold: iouT, confidenceThreshold: confT, perClass: p.perClass)
        if let hi = maximumRows, kept.count > hi { kept.removeLast(kept.count - hi) }
        let rows = max(kept.count, minimumRows)
        func rowsOf(_ a: MultiArray, width: Int) throws -> MultiArray {
            var v = [Double](repeating: 0, count: rows * width)
            for (r, i) in kept.enumerated() {
                for c in 0..<width { v[r * width + c] = a.values[i * width + c] }
            }
            let lead = Array(a.shape.dropLast(2).map { _ in 1 })
            return try MultiArray(shape: lead + [rows, width], dataType: a.dataType, values: v)
        }
        return [p.confidenceOutputFeatureName: .multiArray(try rowsOf(conf, width: classes)),
                p.coordinatesOutputFeatureName: .multiArray(try rowsOf(coords, width: 4))]
    }

    private func array(_ name: String, _ inputs: FeatureProvider) throws -> MultiArray {
        let v = try signature.value(name, in: inputs)
        guard case let .multiArray(a) = v else {
            throw FeatureError.typeMismatch(model: signature.modelName, feature: name, expected: "a MultiArray", found: v.typeName)
        }
        return a
    }

    private func threshold(_ name: String, _ inputs: FeatureProvider) throws -> Double? {
        guard !name.isEmpty, let v = inputs[name] else { return nil }
        switch v {
        case let .double(d): return d
        case let .int64(i): return Double(i)
        default:
            throw FeatureError.typeMismatch(model: signature.modelName, feature: name, expected: "a Double", found: v.typeName)
        }
    }
}

extension CoreMLModelLoader {
    /// The `nonMaximumSuppression` row.
    static func registerNonMaximumSuppression(_ t: inout [Spec.ModelKind: Loader]) {
        t[.nonMaximumSuppression] = { spec, context in
            let p = try classicalParameters(spec, context) { if case let .nonMaximumSuppression(p) = $0 { return p }; return nil }
            let perClass: Bool
            switch p.suppressionMethod {
            case let .pickTop(m)?: perClass = m.perClass
            case nil: throw FeatureError.invalidModel(model: context.name, reason: "the non-maximum suppression sets no suppression method (pickTop)")
            }
            let labels: ClassLabels?
            switch p.classLabels {
            case let .stringClassLabels(v)?: labels = .strings(v.vector)
            case let .int64ClassLabels(v)?: labels = .int64s(v.vector)
            case nil: labels = nil
            }
            return try NonMaximumSuppressionModel(parameters: .init(
                iouThreshold: p.iouThreshold, confidenceThreshold: p.confidenceThreshold, perClass: perClass,
                confidenceInputFeatureName: p.confidenceInputFeatureName, coordinatesInputFeatureName: p.coordinatesInputFeatureName,
                iouThresholdInputFeatureName: p.iouThresholdInputFeatureName,
                confidenceThresholdInputFeatureName: p.confidenceThresholdInputFeatureName,
                confidenceOutputFeatureName: p.confidenceOutputFeatureName, coordinatesOutputFeatureName: p.coordinatesOutputFeatureName,
                classLabels: labels), description: spec.description, name: context.name)
        }
    }
}
