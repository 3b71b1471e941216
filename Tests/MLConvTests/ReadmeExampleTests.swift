// The README's Swift program is Examples/digits/main.swift, verbatim, and it runs: the
// `mlconv-example` executable (built by `swift build --build-tests`) prints Keras's prediction.
import Foundation
import MLConv
import XCTest

final class ReadmeExampleTests: XCTestCase {
    static let program = Paths.root.appendingPathComponent("Examples/digits/main.swift")

    func testReadmeQuotesTheExampleVerbatimInTenLines() throws {
        let readme = try String(contentsOf: Paths.root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: Self.program, encoding: .utf8)
        XCTAssertTrue(readme.contains("```swift\n" + source + "```\n"), "README.md's Swift block differs from Examples/digits/main.swift")
        XCTAssertLessThanOrEqual(source.split(separator: "\n").count, 10)
    }

    func testTheExampleRunsAndPrintsKerasPrediction() throws {
        // The executable sits next to the test bundle in the build directory (on Linux the
        // bundle URL is that directory; on macOS the .xctest bundle inside it).
        let base = Bundle(for: Self.self).bundleURL
        let candidates = [base, base.deletingLastPathComponent()].map { $0.appendingPathComponent("mlconv-example") }
        guard let bin = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            return XCTFail("\(candidates[0].path) is missing; build it with `swift build --build-tests` (or --product mlconv-example)")
        }
        let cache = try Paths.temporary(self)
        let p = Process()
        p.executableURL = bin
        p.currentDirectoryURL = Paths.root
        p.environment = ProcessInfo.processInfo.environment.merging(["MLCONV_CACHE_DIR": cache.path]) { _, b in b }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errors = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, errors)
        let reference = try kerasDigitProbabilities()
        let best = reference.indices.max { reference[$0] < reference[$1] }!
        XCTAssertTrue(text.hasPrefix("digit \(best), probability "), text)
        let printed = Double(text.split(separator: " ").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? "")
        XCTAssertEqual(try XCTUnwrap(printed, text), reference[best], accuracy: 1e-5)
        // The example's open converted into the cache it was given.
        XCTAssertEqual(try FileManager.default.subpathsOfDirectory(atPath: cache.path).filter { $0.hasSuffix(".mlbundle") }.count, 1)
    }
}
