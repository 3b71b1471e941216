// .mlmodel files: the inspector (decode, validation, description of every model kind), then the
// spec decoder and the neural-network importer (whose graph is verified).
import CoreMLFormat
import Foundation
import FuzzSupport
import MLGraph

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    let url = Scratch.write(bytes, to: "model.mlmodel")
    _ = try? CoreMLInspector.report(for: url)
    if let model = try? Spec.Model.decode(bytes, fileName: "model.mlmodel"),
       let result = try? CoreMLImporter.importModel(model, fileName: "model.mlmodel") {
        try? result.graph.verify()
    }
    return 0
}

@main enum Main { static func main() { runLibFuzzer(testOneInput) } }
