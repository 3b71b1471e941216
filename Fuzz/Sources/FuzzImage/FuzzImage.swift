// PNG and JPEG inputs (libpng, libjpeg-turbo behind CImageIO), format sniffed from the bytes.
import Foundation
import FuzzSupport
import ImageIO

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    _ = try? ImageCodec.decode(Data(fuzzBytes(data, size)), path: "input.png")
    return 0
}

@main enum Main { static func main() { runLibFuzzer(testOneInput) } }
