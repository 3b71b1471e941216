// ML program options of `compile` and `predict`: --function NAME, --precision fp32|fp16.
import CoreMLFormat
import Foundation

let milOptionSpec = OptionSpec(single: ["--function", "--precision"])

let milOptionsHelp = """
  --function NAME       the function of a multifunction ML program to run (default: main, or the
                        model's default function)
  --precision P         fp32 (default): ML programs typed fp16 run in exact fp32; fp16: every
                        fp16-typed value is rounded to fp16, as on a device (docs/ML_PROGRAMS.md)
"""

/// The ML program import options the arguments ask for.
func milImportOptions(_ args: ParsedArguments) throws -> MILImportOptions {
    var o = MILImportOptions(function: args.value("--function"))
    switch args.value("--precision") {
    case nil, "fp32"?: o.roundFP16 = false
    case "fp16"?: o.roundFP16 = true
    case let other?: throw UsageError("--precision takes fp32 or fp16, found '\(other)'")
    }
    return o
}

/// Imports an ML program model read from `url` (an .mlpackage or an mlProgram .mlmodel).
func importMLProgram(_ spec: Spec.Model, url: URL, options: MILImportOptions) throws -> CoreMLImportResult {
    var isDir: ObjCBool = false
    var modelPath: String?
    if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDir), isDir.boolValue {
        modelPath = (try MLPackage.read(at: url.path).rootModelPath as NSString).deletingLastPathComponent
    } else {
        modelPath = url.deletingLastPathComponent().path
    }
    return try MILImporter.importModel(spec, fileName: url.lastPathComponent, modelPath: modelPath, options: options)
}
