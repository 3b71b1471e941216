// Keras model configs (model.to_json(), config.json of .keras archives, the model_config
// attribute of .h5 files).
import Foundation
import FuzzSupport
import KerasFrontend

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let text = String(validating: fuzzBytes(data, size), as: UTF8.self) else { return 0 }
    if let config = try? KerasModelConfig.parse(text: text, file: "model.json") {
        _ = config.allLayers()
    }
    return 0
}

@main enum Main { static func main() { runLibFuzzer(testOneInput) } }
