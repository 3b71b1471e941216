import Foundation
import MLBundle
import MLGraph
import MLRuntime

/// `mlconv predict model.mlbundle --input NAME=file.npy … [--output-dir DIR]`
enum PredictCommand: Command {
    static let name = "predict"
    static let summary = "run a compiled .mlbundle on .npy inputs"
    static let help = """
    Usage: mlconv predict <model.mlbundle> --input NAME=FILE.npy … [--output-dir DIR] [options]

    Runs the model on the CPU. Each input is a NumPy .npy array (float32, C order; float64/16 and
    int32/64 are converted) with the input's shape as `mlconv inspect` shows it (Keras NHWC layout
    for Keras models); a leading batch dimension of 1 may be omitted.
    Writes DIR/<output name>.npy (float32) per output when --output-dir is given, and prints a
    summary of each output (shape, range; top-5 labels for classifiers).

    Options:
      --input NAME=FILE     an input array; repeatable (one per model input)
      --output-dir DIR      where to write one .npy per output (created if missing)
      --threads N           CPU threads (default: all cores)
      --reference           run the plain reference kernels instead of oneDNN (slow; for checking)
      --benchmark N         after the prediction, time N more (3 warm-up runs first) and print
                            the median and minimum latency in milliseconds
    """
    static let spec = OptionSpec(
        flags: ["--reference"],
        single: ["--output-dir", "--threads", "--benchmark"],
        repeatable: ["--input"],
        positionalRange: 1...1)

    static func run(_ args: ParsedArguments, console: Console) throws -> Int32 {
        let modelURL = URL(fileURLWithPath: args.positional[0])
        let bundle = try BundleFile(contentsOf: modelURL)
        var config = Model.Configuration()
        if let t = try args.int("--threads") {
            guard t >= 1 else { throw UsageError("--threads must be at least 1, found \(t)") }
            config.threadCount = t
        }
        config.referenceOnly = args.has("--reference")
        let model = try Model(graph: bundle.graph, configuration: config)
        var inputs: [String: NDArray] = [:]
        for (name, path) in try args.pairs("--input") {
            guard inputs[name] == nil else { throw UsageError("--input \(name) given twice") }
            inputs[name] = try NPY.read(contentsOf: URL(fileURLWithPath: path))
        }
        let outputs = try model.prediction(from: inputs)
        if let dir = args.value("--output-dir") {
            let d = URL(fileURLWithPath: dir)
            try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
            for name in bundle.graph.outputs {
                try NPY.write(outputs[name]!, to: d.appendingPathComponent(safeFileName(name) + ".npy"))
            }
        }
        for name in bundle.graph.outputs {
            let a = outputs[name]!
            console.print(summarize(name: name, a))
            if let labels = bundle.graph.description.classLabels, bundle.graph.description.probabilitiesOutput == name {
                for (rank, (i, p)) in topK(a.scalars, k: min(5, labels.count)).enumerated() {
                    console.print(String(format: "  %d. %@  %.4f", rank + 1, labels[i], p))
                }
            }
        }
        if let dir = args.value("--output-dir") { console.print("outputs written to \(dir)/") }
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
            console.print(String(format: "latency: median %.3f ms, min %.3f ms over %d runs (%d threads)",
                                 ms[ms.count / 2], ms[0], runs, config.threadCount))
        }
        return 0
    }
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
