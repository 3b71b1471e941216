// Keras HDF5 files (.h5): libhdf5 opens the bytes as a file on tmpfs; the converter reads the
// architecture and weights and builds a verified graph.
import Foundation
import FuzzSupport
import KerasFrontend

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let url = Scratch.write(fuzzBytes(data, size), to: "model.h5")
    _ = try? KerasInspector.inspect(url)
    _ = try? KerasConverter().convert(modelAt: url)
    return 0
}

@main enum Main { static func main() { runLibFuzzer(testOneInput) } }
