// `mlconv quantize Model.mlpackage -o Small.mlpackage …`: ML program weight compression
// (MLPasses.MILWeightCompressor).
import CoreMLFormat
import Foundation
import MLPasses

enum MLProgramQuantize {
    static func mode(_ args: ParsedArguments) throws -> MILCompressionMode {
        var modes: [MILCompressionMode] = []
        if args.has("--linear") {  // `--linear int8|int4` (issue 11's spelling)
            guard let v = args.value("--linear") else {
                throw UsageError("--linear on an .mlpackage takes int8 or int4 (e.g. --linear int8)")
            }
            let b = v == "int4" ? 4 : 8
            if let given = try args.int("--bits"), given != b { throw UsageError("--linear \(v) is \(b)-bit; drop --bits \(given)") }
            modes.append(.linear(bits: b, blockSize: try args.int("--block-size")))
        }
        if args.has("--linear-symmetric") {  // the older spelling of --linear int8|int4
            let b = try args.int("--bits") ?? 8
            guard b == 8 || b == 4 else { throw UsageError("--linear-symmetric on an .mlpackage is int8 (--bits 8, default) or int4 (--bits 4), found --bits \(b)") }
            modes.append(.linear(bits: b, blockSize: try args.int("--block-size")))
        }
        if let n = args.value("--palettize") {
            guard let bits = Int(n) else { throw UsageError("--palettize takes a bit count (1, 2, 4, 6 or 8), found '\(n)'") }
            let m = args.value("--palettize-mode") ?? "kmeans"
            guard m == "kmeans" || m == "uniform" else { throw UsageError("--palettize-mode takes kmeans or uniform, found '\(m)'") }
            modes.append(.palettize(bits: bits, kmeans: m == "kmeans", groupSize: try args.int("--group-size")))
        }
        if let p = args.value("--prune") {
            if p == "magnitude" {
                guard let s = try args.float("--sparsity") else { throw UsageError("--prune magnitude needs --sparsity S (0…1)") }
                modes.append(.prune(sparsity: Double(s), nOfM: nil))
            } else {
                let parts = p.split(separator: ":").compactMap { Int($0) }
                guard parts.count == 2 else { throw UsageError("--prune takes magnitude or n:m, found '\(p)'") }
                modes.append(.prune(sparsity: Double(parts[0]) / Double(max(parts[1], 1)), nOfM: (parts[0], parts[1])))
            }
        }
        for flag in ["--fp16", "--kmeans"] where args.has(flag) {
            throw UsageError("\(flag) applies to .mlmodel/.mlbundle/.h5 input; for an .mlpackage use --linear int8|int4, --palettize N or --prune")
        }
        guard modes.count == 1 else {
            throw UsageError("give exactly one of --linear int8|int4, --palettize N, --prune for an .mlpackage")
        }
        return modes[0]
    }

    static func run(_ args: ParsedArguments, input: URL, output: URL, console: Console) throws -> Int32 {
        guard output.pathExtension.lowercased() == "mlpackage" else {
            throw UsageError("an .mlpackage compresses into an .mlpackage; give -o NAME.mlpackage")
        }
        let m = try mode(args)
        let report = try MILWeightCompressor.compress(packageAt: input.path, to: output.path, mode: m,
                                                      weightThreshold: try args.int("--min-weights") ?? 2048)
        console.print("weight                                    shape                 SQNR dB")
        for r in report {
            console.print(r.name.padding(toLength: 42, withPad: " ", startingAt: 0) + " "
                + "\(r.shape)".padding(toLength: 21, withPad: " ", startingAt: 0) + " " + String(format: "%.2f", r.sqnr))
        }
        console.print("wrote \(output.path) (\(formatBytes(directorySize(output.path))), \(report.count) weight(s) compressed)")
        return 0
    }
}
