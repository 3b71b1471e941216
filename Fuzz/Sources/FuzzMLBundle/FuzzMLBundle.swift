// Compiled .mlbundle files: mapped from tmpfs and decoded (header, sections, graph, weight
// references). The checksum is not verified, so that mutated structure is reached; then the
// decoded graph is verified.
import Foundation
import FuzzSupport
import MLBundle
import MLGraph

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let url = Scratch.write(fuzzBytes(data, size), to: "model.mlbundle")
    if let bundle = try? BundleFile(contentsOf: url, verifyChecksum: false) {
        try? bundle.graph.verify()
        _ = bundle.weightByteCountsByEncoding
    }
    return 0
}

@main enum Main { static func main() { runLibFuzzer(testOneInput) } }
