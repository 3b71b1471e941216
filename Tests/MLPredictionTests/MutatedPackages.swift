import Foundation
import XCTest
import CoreMLFormat
import MLRuntime

/// The linear congruential generator the corrupted-package tests draw byte positions and values
/// from (Knuth's MMIX constants), so each test's mutations are the same on every run.
struct MutationRandom {
    var state: UInt64
    /// A number in 0..<n (0 when n < 1).
    mutating func next(_ n: Int) -> Int {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Int((state >> 33) % UInt64(max(n, 1)))
    }
}

/// Copies the package at `src` `iterations` times, replaces 3 random bytes of one of `files`
/// (paths inside the package, taken in turn by iteration), then imports the program and predicts
/// from `feeds`. Each copy must run or fail with an error that has a message; a trap fails the
/// whole test process. Returns how many ran and how many were refused.
func runMutatedPackages(_ src: URL, files: [String], iterations: Int, random: inout MutationRandom,
                        feeds: [String: NDArray], file: StaticString = #filePath, line: UInt = #line) throws -> (ran: Int, refused: Int) {
    let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("mlconv-milfuzz-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: tmp) }
    var outcomes = (ran: 0, refused: 0)
    for i in 0..<iterations {
        try? FileManager.default.removeItem(at: tmp)
        try FileManager.default.copyItem(at: src, to: tmp)
        let target = tmp.appendingPathComponent(files[i % files.count])
        var bytes = try [UInt8](Data(contentsOf: target))
        for _ in 0..<3 { bytes[random.next(bytes.count)] = UInt8(random.next(256)) }
        try Data(bytes).write(to: target)
        do {
            let spec = try Spec.Model.load(contentsOf: tmp.path)
            let graph = try MILImporter.importModel(spec, fileName: "fuzz", modelPath: tmp.appendingPathComponent("Data/com.apple.CoreML").path).graph
            _ = try Model(graph: graph).prediction(from: feeds)
            outcomes.ran += 1
        } catch {
            outcomes.refused += 1
            XCTAssertFalse("\(error)".isEmpty, file: file, line: line)
        }
    }
    return outcomes
}
