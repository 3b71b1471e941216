import Foundation
import ImageIO
import KerasFrontend
import MLGraph
import MLRuntime
import CoreMLFormat

/// `mlconv predict model.mlbundle --input NAME=file.npy|image … [--output-dir DIR]`;
/// `mlconv predict model.mlmodel --input NAME=VALUE … | --inputs batch.json|data.csv [--output-json F] [--output-csv F]`
enum PredictCommand: Command {
    static let name = "predict"
    static let summary = "run a model (.mlbundle, .mlmodel or .h5) on .npy arrays, images, typed values or JSON/CSV batches"
    static let help = """
    Usage: mlconv predict <model.mlbundle|model.mlmodel|model.h5> --input NAME=FILE … [--output-dir DIR] [options]

    Runs the model on the CPU. Each input is a NumPy .npy array (float32, C order; float64/16 and
    int32/64 are converted) with the input's shape as `mlconv inspect` shows it (Keras NHWC layout
    for Keras models, Core ML's shape for .mlmodel multi-arrays); a leading batch dimension of 1
    may be omitted. Image inputs (and NHWC inputs with 1 or 3 channels) also take a PNG or JPEG
    file, resized to the model's size with --crop, then put through the model's own preprocessing.
    With --output-dir, writes DIR/<output name>.npy (float32) per output and DIR/<output name>.png
    for image outputs (values clamped to 0–255 and rounded). Prints a summary of each output
    (shape, range; top-5 labels with probabilities for classifiers).

    Core ML models of every type (pipelines, tree ensembles, GLMs, SVMs, kNN, encoders, neural
    networks) also run on typed feature values, as Core ML's MLModel.prediction(from:):
      mlconv predict Titanic.mlmodel --input Pclass=1 --input Sex=female --input Age=22
    Each VALUE is converted to the input's type in the model description (`mlconv inspect`):
    Int64 and Double numbers, String text, MultiArray as a JSON list ("[1,2,3]"), numbers separated
    by commas, or a .npy file, Dictionary as a JSON object ('{"a": 1}'), Image as a PNG/JPEG path.
    Classifier outputs print the predicted label and the top-5 labels with their probabilities.
    Batches (Core ML's batch prediction), outputs in input order:
      --inputs FILE         a .json file holding a list of objects (feature name → value: numbers,
                            strings, nested lists for MultiArrays, objects for dictionaries) or a
                            .csv file with a header row of feature names (an empty cell of a Double
                            feature is NaN, the missing value of Core ML's trees and imputers)
      --output-json FILE    a JSON list of objects keyed by the model's output names (dictionaries
                            as objects, MultiArrays as nested lists, int64 labels as numbers)
      --output-csv FILE     a CSV: one column per output; dictionaries and MultiArrays expand to
                            one column per key / element (name[key], name[i])
    Without an output file a batch prints one JSON object per line. In a CSV cell, a MultiArray is
    a quoted list of numbers ("1.5,2,3" or "[1.5, 2, 3]"), a Dictionary a quoted JSON object. Rows
    are numbered from 1 in messages; JSON null is NaN for Double features; columns or keys that
    name no input are ignored.

    Options:
      --input NAME=FILE     an input: .npy, .png, .jpg, or a typed VALUE for Core ML models (above);
                            repeatable (one per model input)
      --crop MODE           how an image is fitted to the input size, as Apple's Vision:
                            center (scale to cover, crop the centre), fit (scale to fit, pad),
                            fill (stretch); default center
      --output-dir DIR      where to write one .npy per output (created if missing)
      --threads N           CPU threads (default: all cores). Idle workers spin briefly, then
                            sleep: GOMP_SPINCOUNT=3000 unless OMP_WAIT_POLICY or GOMP_SPINCOUNT
                            is set (docs/PERFORMANCE.md, "Thread pool")
      --reference           run the plain reference kernels instead of oneDNN (slow; for checking)
                            and the graph exactly as stored (no inference passes)
      --disable-pass NAME   do not run inference pass NAME when loading the model; repeatable.
                            Passes, in order: \(PassPipeline.inference.names.joined(separator: ", ")).
                            Passes a bundle was written without (keras/compile --disable-pass)
                            stay disabled too
      --config PATH         architecture JSON, for a weights-only Keras .h5
      --lower, --custom-layer, --hooks   hooks for Keras Lambda/custom layers and Core ML custom layers
                                         of an .mlmodel (see `mlconv keras --help`, `mlconv compile --help`)
      --no-auto-lambda      do not lower pure-expression Keras Lambda layers automatically
      --profile             print the time of every layer (slowest first) with the kernel that ran it
      --benchmark N         after the prediction, time N more (3 warm-up runs first) and print
                            the median and minimum latency in milliseconds
    ML programs (.mlpackage, mlProgram .mlmodel):
    \(milOptionsHelp)
    """
    static let spec = OptionSpec(
        flags: ["--reference", "--profile"],
        single: ["--output-dir", "--threads", "--benchmark", "--crop", "--inputs", "--output-json", "--output-csv"],
        repeatable: ["--input"],
        positionalRange: 1...1).adding(hookOptionSpec).adding(OptionSpec(single: ["--config"])).adding(passOptionSpec)
        .adding(milOptionSpec)

    static func run(_ args: ParsedArguments, console: Console) throws -> Int32 {
        let url = URL(fileURLWithPath: args.positional[0])
        let decoded: Spec.Model?
        switch try FeaturePrediction.route(url, args) {
        case let .features(spec): return try FeaturePrediction.run(spec, url: url, args: args, console: console)
        case let .tensors(spec): decoded = spec
        }
        let keras = try parseKerasHookOptions(args)
        let disabled = try disabledPasses(args)
        let (graph, recorded) = try loadGraphAndDisabledPasses(url, architectureJSON: args.value("--config").map { URL(fileURLWithPath: $0) },
                                                               kerasOptions: keras, coreMLHooks: try coreMLHookSpecs(args), decoded: decoded,
                                                               milOptions: try milImportOptions(args))
        var config = Model.Configuration()
        config.disabledPasses = disabled.union(recorded)
        if let t = try args.int("--threads") {
            guard t >= 1 else { throw UsageError("--threads must be at least 1, found \(t)") }
            config.threadCount = t
        }
        config.referenceOnly = args.has("--reference")
        let crop = try cropMode(args)
        let model = try Model(graph: graph, configuration: config)
        if let dir = args.value("--output-dir") { try prepareOutputDirectory(URL(fileURLWithPath: dir), option: "--output-dir") }  // MARK: before predicting
        var inputs = try readInputs(try args.pairs("--input"), for: graph, crop: crop)
        // MARK: ML program states: zeros (a new state) unless given; `<state>__next` is printed
        for s in MILStates.states(of: graph) where inputs[s.input] == nil {
            inputs[s.input] = NDArray(shape: graph.inputs.first { $0.name == s.input }?.type.shape ?? [], repeating: 0)
        }
        let outputs: [String: NDArray]
        if args.has("--profile") {
            _ = try model.prediction(from: inputs)  // warm-up: first runs pay for lazy initialisation
            let (out, timings) = try model.profiledPrediction(from: inputs)
            outputs = out
            let total = timings.reduce(0) { $0 + $1.milliseconds }
            console.print(String(format: "profile: %.3f ms in %d layers", total, timings.count))
            for t in timings.sorted(by: { $0.milliseconds > $1.milliseconds }) {
                console.print(String(format: "  %9.3f ms  %5.1f%%  %@  %@  [%@]", t.milliseconds, 100 * t.milliseconds / max(total, 1e-9),
                                     t.node, t.op, t.kernel))
            }
        } else {
            outputs = try model.prediction(from: inputs)
        }
        for name in graph.outputs {
            let a = outputs[name]!
            console.print(summarize(name: name, a))
            if let labels = graph.description.classLabels, graph.description.probabilitiesOutput == name {
                for (rank, (i, p)) in topK(a.scalars, k: min(5, labels.count)).enumerated() {
                    console.print(String(format: "  %d. %@  %.4f", rank + 1, labels[i], p))
                }
            }
        }
        if let dir = args.value("--output-dir") {
            for path in try writeOutputs(outputs, graph: graph, to: URL(fileURLWithPath: dir)) { console.print("wrote \(path)") }
        }
        if let runs = try args.int("--benchmark") {
            guard runs >= 1 else { throw UsageError("--benchmark must be at least 1, found \(runs)") }
            for _ in 0..<3 { _ = try model.prediction(from: inputs) }
            var ms: [Double] = []
            for _ in 0..<runs {
                let t0 = DispatchTime.now().uptimeNanoseconds
                _ = try model.prediction(from: inputs)
                ms.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6)
            }
            ms.sort()
            console.print(String(format: "latency: median %.3f ms, min %.3f ms over %d runs (%d threads",
                                 ms[ms.count / 2], ms[0], runs, config.threadCount) + ", \(ThreadWaitPolicy.summary))")
        }
        return 0
    }
}

/// The --crop option (default center, as Vision's usual centerCrop).
func cropMode(_ args: ParsedArguments) throws -> ImageCropMode {
    guard let v = args.value("--crop") else { return .center }
    guard let m = ImageCropMode(rawValue: v) else { throw UsageError("--crop takes center, fit or fill, found '\(v)'") }
    return m
}

/// A file name for an output tensor name (Keras names may contain '/' or ':').
func safeFileName(_ s: String) -> String {
    String(s.map { $0 == "/" || $0 == ":" || $0 == "\\" ? "_" : $0 })
}

func summarize(name: String, _ a: NDArray) -> String {
    let v = a.scalars
    let finite = v.filter { $0.isFinite }
    let mn = finite.min() ?? .nan, mx = finite.max() ?? .nan
    let mean = finite.isEmpty ? Float.nan : finite.reduce(0, +) / Float(finite.count)
    var s = "\(name): shape \(formatShape(a.shape)), min \(fmt(mn)), max \(fmt(mx)), mean \(fmt(mean))"
    if finite.count != v.count { s += ", \(v.count - finite.count) non-finite" }
    if v.count <= 10 { s += "\n  values: [" + v.map { fmt($0) }.joined(separator: ", ") + "]" }
    return s
}

func fmt(_ x: Float) -> String { String(format: "%.6g", Double(x)) }

/// Indices and values of the k largest entries, descending.
func topK(_ v: [Float], k: Int) -> [(Int, Float)] {
    Array(v.enumerated().sorted { $0.element > $1.element }.prefix(k).map { ($0.offset, $0.element) })
}
