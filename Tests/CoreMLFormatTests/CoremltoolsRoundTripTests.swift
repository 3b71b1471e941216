// Producer side of Scripts/check_proto_roundtrip.py (skipped unless MLCONV_ROUNDTRIP_DIR is set):
// re-encodes every model the script wrote and writes models built in Swift, so the script can
// parse them with coremltools' own protobuf classes.
@testable import CoreMLFormat
import Foundation
import XCTest

final class CoremltoolsRoundTripTests: XCTestCase {
    func testWriteRoundTripFilesForCoremltools() throws {
        guard let dir = ProcessInfo.processInfo.environment["MLCONV_ROUNDTRIP_DIR"], !dir.isEmpty else {
            throw XCTSkip("skipped: set MLCONV_ROUNDTRIP_DIR (see Scripts/check_proto_roundtrip.py) to run")
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: dir).sorted().filter {
            $0.hasSuffix(".mlmodel") && !$0.hasSuffix(".roundtrip.mlmodel") && !$0.hasPrefix("swift_")
        }
        XCTAssertFalse(names.isEmpty, "\(dir) holds no .mlmodel files; run the script's `make` step first")
        for name in names {
            let path = (dir as NSString).appendingPathComponent(name)
            let model: Spec.Model
            do {
                model = try Spec.Model.load(contentsOf: path)
            } catch let error as CoreMLFormatError {
                print("\(name): not a model, no round trip (\(error))")
                continue
            }
            let out = (dir as NSString).appendingPathComponent(String(name.dropLast(".mlmodel".count)) + ".roundtrip.mlmodel")
            try model.write(toFile: out)
            print("\(name): \(model.kind?.name ?? "none"), \(model.unknownFieldWarnings.count) warning(s) -> \(out)")
        }
        try SampleSpecs.classifier.write(toFile: (dir as NSString).appendingPathComponent("swift_classifier.mlmodel"))
        try SampleSpecs.pipeline.write(toFile: (dir as NSString).appendingPathComponent("swift_pipeline.mlmodel"))
    }
}
