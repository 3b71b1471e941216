// `--target` / `--precision` of commands that write ML programs (.mlpackage).
import CoreMLFormat
import Foundation

/// Parses `--target iOS15…iOS18` and `--precision fp16|fp32`; refuses them for outputs that
/// are not `.mlpackage`.
func mlProgramOptions(_ args: ParsedArguments, output: URL) throws -> MLProgramExportOptions {
    var options = MLProgramExportOptions()
    let isPackage = output.pathExtension.lowercased() == "mlpackage"
    for flag in ["--target", "--precision"] where args.value(flag) != nil && !isPackage {
        throw UsageError("\(flag) applies to ML program output (-o NAME.mlpackage)")
    }
    if let t = args.value("--target") {
        guard let target = MLProgramExportOptions.Target(name: t) else {
            throw UsageError("--target takes \(MLProgramExportOptions.Target.allCases.map(\.rawValue).joined(separator: ", ")), found '\(t)'")
        }
        options.target = target
    }
    if let p = args.value("--precision") {
        guard let precision = MLProgramExportOptions.Precision(rawValue: p.lowercased()) else {
            throw UsageError("--precision takes fp16 or fp32, found '\(p)'")
        }
        options.precision = precision
    }
    return options
}

/// Total size of the regular files under `path` (an .mlpackage directory).
func directorySize(_ path: String) -> Int {
    var total = 0
    if let e = FileManager.default.enumerator(atPath: path) {
        for case let rel as String in e {
            let full = (path as NSString).appendingPathComponent(rel)
            if let a = try? FileManager.default.attributesOfItem(atPath: full), (a[.type] as? FileAttributeType) == .typeRegular {
                total += (a[.size] as? Int) ?? 0
            }
        }
    }
    return total
}
