// `mlconv predict` on Core ML models through named feature values: classical models, pipelines,
// typed `--input NAME=VALUE`, and batches (`--inputs batch.json|data.csv`, `--output-json`,
// `--output-csv`), as Core ML's `MLModel.prediction(from:)` / `predictions(fromBatch:)`.
import AtomicFile
import CoreMLFormat
import Foundation
import MLConv
import MLPrediction

/// Neural-network model kinds that `predict` runs on tensors (npy / images) unless a batch or a
/// JSON/CSV output is asked for.
let tensorPathKinds: Set<Spec.ModelKind> = [.neuralNetwork, .neuralNetworkClassifier, .neuralNetworkRegressor, .mlProgram]

enum FeaturePrediction {
    /// Whether `predict` takes the feature path for this file and these arguments.
    /// How `predict` runs a file: through feature values (`.features`), or on tensors, with the
    /// decoded `.mlmodel` when there is one (so it is not decoded twice).
    enum Route {
        case features(Spec.Model)
        case tensors(Spec.Model?)
    }

    static func route(_ url: URL, _ args: ParsedArguments) throws -> Route {
        guard let spec = try decodedCoreMLModel(url, args) else { return .tensors(nil) }
        let batch = args.value("--inputs") != nil || args.value("--output-json") != nil || args.value("--output-csv") != nil
        if let kind = spec.kind, tensorPathKinds.contains(kind), !batch { return .tensors(spec) }
        return .features(spec)
    }

    /// The decoded `.mlmodel` file (nil for other formats and `.mlpackage` directories).
    private static func decodedCoreMLModel(_ url: URL, _ args: ParsedArguments) throws -> Spec.Model? {
        guard try ModelFileKind.detect(url) == .coreML else {
            if args.value("--inputs") != nil || args.value("--output-json") != nil || args.value("--output-csv") != nil {
                throw UsageError("--inputs, --output-json and --output-csv need a Core ML model (.mlmodel); for Keras models and bundles give --input NAME=FILE.npy")
            }
            return nil
        }
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDir), isDir.boolValue {
            // An .mlpackage: batches and JSON/CSV outputs go through feature values; single
            // predictions on tensors read the package themselves.
            let batch = args.value("--inputs") != nil || args.value("--output-json") != nil || args.value("--output-csv") != nil
            return batch ? try MLPackage.read(at: url.path).model : nil
        }
        return try Spec.Model.load(contentsOf: url.path)
    }

    static func run(_ spec: Spec.Model, url: URL, args: ParsedArguments, console: Console) throws -> Int32 {
        var context = ModelLoadContext(name: url.lastPathComponent, modelPath: try ModelLoadContext.modelDirectory(of: url),
                                       programOptions: try milImportOptions(args))
        if let t = try args.int("--threads") {
            guard t >= 1 else { throw UsageError("--threads must be at least 1, found \(t)") }
            context.threadCount = t
        }
        if args.value("--output-dir") != nil {
            throw UsageError("--output-dir writes the tensors of neural networks; this model's outputs are feature values: give --output-json FILE or --output-csv FILE")
        }
        let model = try CoreMLModelLoader.load(spec, context: context)
        let description = model.modelDescription
        let name = url.lastPathComponent

        var rows: [FeatureProvider]
        if let path = args.value("--inputs") {
            guard args.all("--input").isEmpty else { throw UsageError("give either --inputs FILE or --input NAME=VALUE, not both") }
            let file = try existingFile(path, what: "--inputs")
            let data = try readUserFile(file, what: "--inputs")
            switch file.pathExtension.lowercased() {
            case "json": rows = try FeatureJSON.rows(from: data, description: description, model: "\(name) --inputs \(file.lastPathComponent)")
            case "csv":
                guard let text = String(data: data, encoding: .utf8) else {
                    throw CLIError("'\(path)' is not UTF-8 text; save the CSV as UTF-8")
                }
                rows = try FeatureCSV.rows(from: text, description: description, model: "\(name) --inputs \(file.lastPathComponent)")
            default:
                throw UsageError("--inputs takes a .json file (a list of objects) or a .csv file (a header row of feature names), found '\(path)'")
            }
        } else {
            var row: FeatureProvider = [:]
            let types = Dictionary(description.input.map { ($0.name, $0.type) }, uniquingKeysWith: { a, _ in a })
            for (feature, value) in try args.pairs("--input") {
                guard row[feature] == nil else { throw UsageError("--input \(feature) is given twice; give each input once") }
                guard types.keys.contains(feature) else {
                    throw UsageError("the model has no input '\(feature)'; its inputs: " + description.input.map(\.name).joined(separator: ", "))
                }
                row[feature] = try FeatureText.value(value, type: types[feature] ?? nil, feature: feature, model: name)
            }
            rows = [row]
        }

        // Every row has every required input (named by row and file, before any prediction).
        let batchSource = args.value("--inputs").map { URL(fileURLWithPath: $0).lastPathComponent }
        for (i, row) in rows.enumerated() {
            for f in description.input where row[f.name] == nil && !(f.type?.isOptional ?? false) {
                if let batchSource {
                    throw CLIError("\(name): --inputs \(batchSource) row \(i + 1): input feature '\(f.name)' is missing; "
                        + "add it to every row (a key of each JSON object, or a CSV column)")
                }
                throw CLIError("\(name): input feature '\(f.name)' is missing; give it with --input \(f.name)=VALUE "
                    + "(the model's inputs: " + description.input.map(\.name).joined(separator: ", ") + ")")
            }
        }
        let t0 = DispatchTime.now().uptimeNanoseconds
        let outputs = try model.predictions(from: rows)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9
        let outputNames = description.output.map(\.name)

        var wrote = false
        if let path = args.value("--output-json") {
            try AtomicFile.write(try FeatureJSON.encode(outputs), to: path)
            console.print("wrote \(path) (\(outputs.count) rows)")
            wrote = true
        }
        if let path = args.value("--output-csv") {
            try AtomicFile.write(Data(FeatureCSV.encode(outputs, outputs: outputNames).utf8), to: path)
            console.print("wrote \(path) (\(outputs.count) rows)")
            wrote = true
        }
        let isBatch = args.value("--inputs") != nil
        if !isBatch && !wrote {
            for line in describe(outputs[0], names: outputNames, description: description) { console.print(line) }
        } else if !wrote {
            // A batch with no output file: one JSON object per line, in input order.
            for row in outputs {
                let data = try JSONSerialization.data(withJSONObject: row.mapValues(FeatureJSON.jsonObject), options: [.sortedKeys])
                console.print(String(decoding: data, as: UTF8.self))
            }
        }
        if isBatch {
            console.print(String(format: "predicted %d rows in %.3f s (%.1f µs per row)", rows.count, seconds,
                                 seconds * 1e6 / Double(max(rows.count, 1))))
        }
        return 0
    }

    /// One output per line; classifier probabilities as the top 5 labels.
    static func describe(_ row: FeatureProvider, names: [String], description: Spec.ModelDescription) -> [String] {
        var lines: [String] = []
        for name in names {
            guard let v = row[name] else { continue }
            switch v {
            case let .int64(i): lines.append("\(name): \(i)")
            case let .double(d): lines.append("\(name): \(String(format: "%.6g", d))")
            case let .string(s): lines.append("\(name): \(s)")
            case let .dictionary(d):
                let pairs: [(String, Double)]
                switch d {
                case let .stringKeys(m): pairs = m.map { ($0.key, $0.value) }
                case let .int64Keys(m): pairs = m.map { (String($0.key), $0.value) }
                }
                let sorted = pairs.sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0 < $1.0 }
                lines.append("\(name): \(pairs.count) entries" + (pairs.count > 5 ? ", top 5:" : ":"))
                for (rank, (k, p)) in sorted.prefix(5).enumerated() {
                    lines.append(String(format: "  %d. %@  %.6g", rank + 1, k, p))
                }
            case let .multiArray(a):
                let finite = a.values.filter(\.isFinite)
                var s = "\(name): MultiArray \(a.dataType.rawValue) shape \(a.shape)"
                if let mn = finite.min(), let mx = finite.max() { s += String(format: ", min %.6g, max %.6g", mn, mx) }
                if a.count <= 10 { s += "\n  values: [" + a.values.map { String(format: "%.6g", $0) }.joined(separator: ", ") + "]" }
                lines.append(s)
            case let .sequence(.int64(s)): lines.append("\(name): \(s)")
            case let .sequence(.string(s)): lines.append("\(name): \(s)")
            case let .image(img): lines.append("\(name): image \(img.width)x\(img.height) \(img.colorSpace.rawValue)")
            }
        }
        return lines
    }
}
