// The Keras hooks file (`mlconv keras --hooks hooks.json`).
import Foundation
import FuzzSupport
import KerasFrontend

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let text = String(validating: fuzzBytes(data, size), as: UTF8.self) else { return 0 }
    _ = try? KerasHooksFile.parse(text, file: "hooks.json")
    return 0
}

@main enum Main { static func main() { runLibFuzzer(testOneInput) } }
