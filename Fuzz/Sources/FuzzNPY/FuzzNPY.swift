// NumPy .npy inputs (`mlconv predict --input name=file.npy`).
import Foundation
import FuzzSupport
import MLRuntime

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    if let array = try? NPY.decode(Data(fuzzBytes(data, size)), name: "input.npy") {
        _ = NPY.encode(array)
    }
    return 0
}

@main enum Main { static func main() { runLibFuzzer(testOneInput) } }
