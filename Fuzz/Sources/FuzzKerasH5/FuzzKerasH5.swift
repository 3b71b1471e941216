// Keras HDF5 files (.h5): libhdf5 opens the bytes as a file on tmpfs; the converter reads the
// architecture and weights and builds a verified graph. libhdf5 reads each input in a child
// process first (HDF5Isolation, time limit MLCONV_HDF5_PROBE_TIMEOUT=3 from Scripts/fuzz); the
// memory limit is 512 MiB, so a damaged string that makes libhdf5 allocate gigabytes is refused
// after the child instead of being read again here.
import Diagnostics
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

@main enum Main {
    static func main() {
        MemoryLimit.set(512 << 20)
        runLibFuzzer(testOneInput)
    }
}
