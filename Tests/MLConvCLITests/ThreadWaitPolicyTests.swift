import Foundation
import XCTest

/// Issue 12, thread pool: the `mlconv` executable gives libgomp (oneDNN's OpenMP runtime)
/// GOMP_SPINCOUNT=3000 when the environment chooses no wait policy, by re-executing itself
/// before any library initialises (Sources/CMLConvStartup); the user's setting wins.
/// `predict --benchmark` reports the policy in effect.
final class ThreadWaitPolicyTests: XCTestCase {
    var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// The `mlconv` built next to this test bundle (`swift build --build-tests` builds both).
    func executable() throws -> URL {
        var dir = Bundle.main.bundleURL
        if dir.pathExtension != "xctest" { dir = URL(fileURLWithPath: CommandLine.arguments[0]) }
        let candidate = dir.deletingLastPathComponent().appendingPathComponent("mlconv")
        guard FileManager.default.isExecutableFile(atPath: candidate.path) else {
            throw XCTSkip("thread-policy test skipped: no mlconv executable at \(candidate.path) (build it with `swift build --build-tests`)")
        }
        return candidate
    }

    func benchmarkLine(environment extra: [String: String]) throws -> String {
        let process = Process()
        process.executableURL = try executable()
        process.arguments = ["predict", repository.appendingPathComponent("Fixtures/bundles/digits_cnn_format1.0.mlbundle").path,
                             "--input", "digit=" + repository.appendingPathComponent("Fixtures/demo/digit_7.npy").path,
                             "--threads", "2", "--benchmark", "1"]
        var environment = ProcessInfo.processInfo.environment
        for name in ["OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "MLCONV_GOMP_DEFAULT"] { environment[name] = nil }
        environment.merge(extra) { $1 }
        process.environment = environment
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let text = String(decoding: data, as: UTF8.self)
        return try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("latency:") }.map(String.init), text)
    }

    func testDefaultSpinCountWhenTheEnvironmentSaysNothing() throws {
        XCTAssertTrue(try benchmarkLine(environment: [:]).hasSuffix("(2 threads, GOMP_SPINCOUNT=3000 (mlconv's default))"))
    }

    func testTheUsersPolicyWins() throws {
        XCTAssertTrue(try benchmarkLine(environment: ["OMP_WAIT_POLICY": "passive"])
            .hasSuffix("(2 threads, OMP_WAIT_POLICY=passive (environment))"))
        XCTAssertTrue(try benchmarkLine(environment: ["GOMP_SPINCOUNT": "0"])
            .hasSuffix("(2 threads, GOMP_SPINCOUNT=0 (environment))"))
    }
}
