import Foundation
import ImageIO
import MLGraph
import MLPasses
import MLRuntime

/// `mlconv compare a b [--input NAME=FILE] [--images DIR] [--min-snr DB]`
enum CompareCommand: Command {
    static let name = "compare"
    static let summary = "run two models on the same inputs and report SNR/PSNR/errors"
    static let help = """
    Usage: mlconv compare <model A> <model B> [--input NAME=FILE …] [--images DIR] [--min-snr DB]

    Runs both models (any of .mlbundle, .mlmodel, .h5; typically a float model and its quantized
    copy) on the same inputs and reports, per output: SNR and PSNR in dB as coremltools'
    compare_models defines them (signal taken from model B; the mean over samples, with the
    variance over samples in parentheses; identical outputs give 10·log10(mean(b²)/1e-7), not ∞,
    because of coremltools' 1e-7 guard), max and mean absolute error; for
    classifiers, top-1 agreement and whether A's top-1 is in B's top-5. The two models must have
    the same input and output names.
    Inputs: --input NAME=FILE (.npy or image) for one sample; --images DIR runs every PNG/JPEG in
    DIR through a single-image-input model; with neither, one seeded random sample is used
    (0–255 for image inputs, standard normal otherwise).

    Options:
      --input NAME=FILE   repeatable
      --images DIR        a directory of .png/.jpg images
      --crop MODE         center | fit | fill (image resizing, default center)
      --min-snr DB        exit with status 3 when any output's mean SNR is below DB
      --threads N         CPU threads
    """
    static let spec = OptionSpec(single: ["--images", "--min-snr", "--crop", "--threads"], repeatable: ["--input"],
                                 positionalRange: 2...2)

    static func run(_ args: ParsedArguments, console: Console) throws -> Int32 {
        let (ga, da) = try loadGraphAndDisabledPasses(URL(fileURLWithPath: args.positional[0]))
        let (gb, db) = try loadGraphAndDisabledPasses(URL(fileURLWithPath: args.positional[1]))
        // MARK: outputs paired by position when only their names differ (a Keras model and its
        // coremltools conversion, whose outputs coremltools renames, e.g. "probs" → "Identity")
        var pairB = Dictionary(uniqueKeysWithValues: ga.outputs.map { ($0, $0) })
        if Set(ga.outputs) != Set(gb.outputs), ga.outputs.count == gb.outputs.count {
            pairB = Dictionary(uniqueKeysWithValues: zip(ga.outputs, gb.outputs).map { ($0, $1) })
            console.print("outputs paired by position: " + zip(ga.outputs, gb.outputs).map { "\($0) ↔ \($1)" }.joined(separator: ", "))
        }
        guard Set(ga.inputs.map(\.name)) == Set(gb.inputs.map(\.name)), Set(ga.outputs.compactMap { pairB[$0] }) == Set(gb.outputs) else {
            throw CLIError("the models differ in inputs or outputs: A has inputs \(ga.inputs.map(\.name)), outputs \(ga.outputs); B has inputs \(gb.inputs.map(\.name)), outputs \(gb.outputs)")
        }
        for a in ga.inputs {
            let b = gb.inputs.first { $0.name == a.name }!
            guard a.type.shape == b.type.shape else {
                throw CLIError("input '\(a.name)' has shape \(formatShape(a.type.shape)) in A but \(formatShape(b.type.shape)) in B (e.g. Keras NHWC against a Core ML multi-array [C, H, W]); the same input cannot feed both — convert both with --image-input \(a.name) so both take images, or compare models of the same layout")
            }
        }
        var config = Model.Configuration()
        if let t = try args.int("--threads") { config.threadCount = max(1, t) }
        var configA = config, configB = config
        configA.disabledPasses = da; configB.disabledPasses = db  // as the bundles were written
        let ma = try Model(graph: ga, configuration: configA), mb = try Model(graph: gb, configuration: configB)
        let crop = try cropMode(args)
        var samples: [[String: NDArray]] = []
        if let dir = args.value("--images") {
            guard ga.inputs.count == 1 else { throw CLIError("--images needs a model with one input; this one has \(ga.inputs.count)") }
            let files = try FileManager.default.contentsOfDirectory(atPath: try existingFile(dir, what: "--images", directory: true).path).sorted()
                .filter { ["png", "jpg", "jpeg"].contains(URL(fileURLWithPath: $0).pathExtension.lowercased()) }
            guard !files.isEmpty else { throw CLIError("no .png/.jpg images in '\(dir)'") }
            for f in files {
                samples.append(try readInputs([(ga.inputs[0].name, dir + "/" + f)], for: ga, crop: crop))
            }
        } else if !args.all("--input").isEmpty {
            samples.append(try readInputs(try args.pairs("--input"), for: ga, crop: crop))
        } else {
            var g = SplitMix(seed: 42)
            var s: [String: NDArray] = [:]
            for i in ga.inputs {
                let isImage = ga.description.inputs.first { $0.name == i.name }?.image != nil
                let values = (0..<i.type.elementCount).map { _ in isImage ? Float(g.next() % 256) : g.normal() }
                s[i.name] = try NDArray(shape: i.type.shape, scalars: values)
            }
            samples.append(s)
            console.print("no inputs given: using one seeded random sample")
        }
        var snrs: [String: [Double]] = [:], psnrs: [String: [Double]] = [:], maxErr: [String: Double] = [:], meanErr: [String: [Double]] = [:]
        var top1 = 0, top5 = 0
        for s in samples {
            let oa = try ma.prediction(from: s), ob = try mb.prediction(from: s)
            for name in ga.outputs {
                let c = try compareOutputs(reference: oa[name]!.scalars, quantized: ob[pairB[name] ?? name]!.scalars)
                snrs[name, default: []].append(c.snr)
                psnrs[name, default: []].append(c.psnr)
                meanErr[name, default: []].append(c.meanAbsError)
                maxErr[name] = max(maxErr[name] ?? 0, c.maxAbsError)
            }
            if let p = ga.description.probabilitiesOutput, let a = oa[p]?.scalars, let b = ob[pairB[p] ?? p]?.scalars {
                let ta = topK(a, k: 1)[0].0
                let tb = topK(b, k: 5).map(\.0)
                if tb.first == ta { top1 += 1 }
                if tb.contains(ta) { top5 += 1 }
            }
        }
        var failed: [String] = []
        let minSNR = try args.float("--min-snr").map(Double.init)
        console.print("samples: \(samples.count)")
        for name in ga.outputs {
            let snr = mean(snrs[name]!), psnr = mean(psnrs[name]!)
            console.print(String(format: "%@: SNR %.2f dB (variance %.3g), PSNR %.2f dB, max abs error %.6g, mean abs error %.6g",
                                 name, snr, variance(snrs[name]!), psnr, maxErr[name]!, mean(meanErr[name]!)))
            if let m = minSNR, !(snr >= m) { failed.append(String(format: "%@ (%.2f dB)", name, snr)) }
        }
        if ga.description.probabilitiesOutput != nil {
            console.print("top-1 agreement: \(top1)/\(samples.count); A's top-1 in B's top-5: \(top5)/\(samples.count)")
        }
        if !failed.isEmpty, let m = minSNR {
            console.error("mlconv compare: error: SNR below --min-snr \(m) dB for \(failed.joined(separator: ", "))")
            return 3
        }
        return 0
    }
}

private func mean(_ v: [Double]) -> Double { v.isEmpty ? .nan : v.reduce(0, +) / Double(v.count) }
private func variance(_ v: [Double]) -> Double {
    let m = mean(v)
    return v.isEmpty ? .nan : v.reduce(0) { $0 + ($1 - m) * ($1 - m) } / Double(v.count)
}

/// Seeded generator for reproducible random samples.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// Standard normal (Box–Muller).
    mutating func normal() -> Float {
        let u1 = max(Double(next() >> 11) / Double(1 << 53), 1e-300), u2 = Double(next() >> 11) / Double(1 << 53)
        return Float((-2 * log(u1)).squareRoot() * cos(2 * .pi * u2))
    }
}
