// ML programs: a framed input (4-byte little-endian length, the package's model.mlmodel, then its
// weights/weight.bin) is laid out as an .mlpackage's Data/com.apple.CoreML directory; the MIL
// importer decodes the program and reads the blob values it names.
import CoreMLFormat
import Foundation
import FuzzSupport
import MLGraph

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let (spec, weights) = splitFramed(fuzzBytes(data, size))
    let weightURL = Scratch.write(weights, to: "mlprogram/weights/weight.bin")
    let modelPath = weightURL.deletingLastPathComponent().deletingLastPathComponent().path
    guard let model = try? Spec.Model.decode(spec, fileName: "model.mlmodel") else { return 0 }
    for function in MILImporter.functionNames(model).prefix(4) {
        if let result = try? MILImporter.importModel(model, fileName: "model.mlmodel", modelPath: modelPath,
                                                     options: MILImportOptions(function: function)) {
            try? result.graph.verify()
        }
    }
    return 0
}

@main enum Main { static func main() { runLibFuzzer(testOneInput) } }
