// ML program weight files (weight.bin, blob format version 2) on their own: the header, then the
// metadata records at offsets 64, 128, … (up to the header's count, at most 64) until one does not
// decode, each read back with its own type and element count, and its storage taken.
import CoreMLFormat
import Foundation
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let url = Scratch.write(fuzzBytes(data, size), to: "weight.bin")
    guard let file = try? MILBlobFile(path: url.path, name: "weight.bin") else { return 0 }
    var offset: UInt64 = 64
    for _ in 0..<min(Int(file.count), 64) {
        guard let blob = try? file.blob(at: offset) else { break }
        let storage = file.storage(of: blob)
        _ = storage
        _ = try? file.blob(at: offset, expecting: blob.dataType, elementCount: blob.elementCount)
        offset += 64
    }
    return 0
}

@main enum Main { static func main() { runLibFuzzer(testOneInput) } }
