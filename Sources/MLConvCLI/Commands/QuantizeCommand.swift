import Foundation
import MLGraph
import MLPasses

/// `mlconv quantize in -o out --bits N (--kmeans|--linear|--linear-symmetric) | --fp16`, and for
/// an .mlpackage `--linear int8|int4`, `--palettize N`, `--prune …` (MLProgramQuantize)
enum QuantizeCommand: Command {
    static let name = "quantize"
    static let summary = "compress weights: fp16, linear or k-means (LUT) n-bit"
    static let help = """
    Usage: mlconv quantize <in.mlmodel|in.mlbundle|in.h5> -o <out.mlbundle|out.mlmodel>
                           (--fp16 | --bits N (--kmeans | --linear | --linear-symmetric)) [options]

    Compresses the model's weights and prints a per-layer table (layer, weight, count, bits, mode,
    SQNR in dB) with the total weight size before and after. Weights already in fp16 or quantized
    are dequantized first.
      --fp16                 IEEE half precision (round to nearest even); values beyond ±65504
                             are an error unless --clamp
      --bits N --linear      per-output-channel linear n-bit (1–8), as Core ML linearQuantization
      --bits 8 --linear-symmetric   symmetric 8-bit (scale = max|w|/127 per channel)
      --bits N --kmeans      optimal 1-D k-means look-up table of 2^N values per tensor (1–8 bits)

    Options:
      -o, --output PATH      output file (.mlbundle or .mlmodel), written atomically
      --config PATH          architecture JSON for a weights-only Keras .h5
      --min-weights N        leave tensors with fewer than N values unchanged
      --skip-layer NAME      leave this layer unchanged; repeatable
      --skip-type TYPE       leave every layer of this op type (e.g. batchNorm, dense) unchanged;
                             repeatable
      --clamp                with --fp16, clamp out-of-range values to ±65504

    ML programs (in.mlpackage → out.mlpackage), as coremltools.optimize.coreml; weights of rank > 1
    with more than 2048 values. iOS16 ops, or iOS18 ops for an iOS18 program and for the options
    marked (iOS18), which move an older program to iOS18:
      --linear int8|int4 [--block-size B]   symmetric int8 or int4 (iOS18) per output channel
                             (default), or per block of B input channels (iOS18) →
                             constexpr_affine_dequantize / constexpr_blockwise_shift_scale;
                             --linear-symmetric [--bits 8|4] is the same (older spelling)
      --palettize N [--palettize-mode kmeans|uniform] [--group-size G]   2^N-entry table per
                             tensor (N = 1, 2, 4, 6, 8; 3 is iOS18) or per group of G output
                             channels (iOS18) → constexpr_lut_to_dense
      --prune magnitude --sparsity S   the fraction S of smallest |w| set to 0
      --prune N:M            in every M input-channel elements the N smallest set to 0 (iOS18)
                             → constexpr_sparse_to_dense
      --min-weights N        compress tensors with more than N values (default 2048)
    """
    static let spec = OptionSpec(
        flags: ["--fp16", "--kmeans", "--linear", "--linear-symmetric", "--clamp"],
        single: ["--output", "--bits", "--min-weights", "--config",
                 // MARK: ML programs
                 "--palettize", "--palettize-mode", "--group-size", "--block-size", "--prune", "--sparsity"],
        repeatable: ["--skip-layer", "--skip-type"],
        aliases: ["-o": "--output"],
        positionalRange: 1...1,
        optionalValues: ["--linear": ["int8", "int4"]])  // MARK: ML programs: --linear int8|int4

    static func mode(_ args: ParsedArguments) throws -> QuantizationMode {
        let kinds = ["--fp16", "--kmeans", "--linear", "--linear-symmetric"].filter { args.has($0) }
        guard kinds.count == 1 else {
            throw UsageError("give exactly one of --fp16, --kmeans, --linear, --linear-symmetric" + (kinds.isEmpty ? "" : " (found \(kinds.joined(separator: ", ")))"))
        }
        if let v = args.value("--linear") {
            throw UsageError("--linear \(v) is for an .mlpackage; for .mlmodel/.mlbundle/.h5 input use --bits N --linear")
        }
        let bits = try args.int("--bits")
        switch kinds[0] {
        case "--fp16":
            if let b = bits, b != 16 { throw UsageError("--fp16 is 16 bits; drop --bits \(b)") }
            return .fp16
        case "--linear-symmetric":
            if let b = bits, b != 8 { throw UsageError("--linear-symmetric is 8-bit only, found --bits \(b)") }
            return .linearSymmetric
        default:
            guard let b = bits else { throw UsageError("\(kinds[0]) needs --bits N (1–8)") }
            guard (1...8).contains(b) else { throw UsageError("--bits must be 1–8, found \(b)") }
            return kinds[0] == "--kmeans" ? .kmeans(bits: b) : .linear(bits: b)
        }
    }

    static func run(_ args: ParsedArguments, console: Console) throws -> Int32 {
        let input = URL(fileURLWithPath: args.positional[0])
        let output = URL(fileURLWithPath: try args.required("--output"))
        if input.pathExtension.lowercased() == "mlpackage" { return try MLProgramQuantize.run(args, input: input, output: output, console: console) }
        let mode = try mode(args)
        var options = QuantizationOptions()
        options.minWeights = try args.int("--min-weights") ?? 0
        options.skipLayers = Set(args.all("--skip-layer"))
        options.skipOpTypes = Set(args.all("--skip-type"))
        options.clampFP16 = args.has("--clamp")
        let (graph, recorded) = try loadGraphAndDisabledPasses(input, architectureJSON: args.value("--config").map { URL(fileURLWithPath: $0) })
        let quantizer = try WeightQuantizer(mode: mode, options: options)
        let showProgress = isatty(STDERR_FILENO) == 1
        let (quantized, report) = try quantizer.quantize(graph, progress: showProgress ? { done, total in
            try? FileHandle.standardError.write(contentsOf: Data("\rquantizing \(done)/\(total) tensors".utf8))
            if done == total { try? FileHandle.standardError.write(contentsOf: Data("\n".utf8)) }
        } : nil)
        console.print(report.renderTable())
        // The graph is stored as given; passes the input bundle disabled stay recorded as disabled.
        try writeModel(quantized, to: output, source: input.lastPathComponent, console: console,
                       passes: InferencePasses(run: false, disabled: recorded))
        return 0
    }
}
