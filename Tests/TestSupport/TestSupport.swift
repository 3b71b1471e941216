// Shared helpers for the test targets: locating the repository and the `../shared` folder of
// real models (with a visible skip when absent), temporary directories, deterministic random
// tensors, and float comparisons. (The `.npy` codec is public API: `MLRuntime.NPY`.)
import Foundation
import MLGraph
import XCTest

/// Well-known paths.
public enum TestPaths {
    /// The repository root: the nearest directory above this file holding `Package.swift`.
    public static let repositoryRoot: URL = {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while url.path != "/" {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
            url.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }()

    /// `../shared` next to the repository: real third-party models, images and reference outputs
    /// that must never be copied into the repository.
    public static var shared: URL { repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared") }

    /// `../shared/<relativePath>`.
    /// - Throws: `XCTSkip` with a message naming the missing path, so the skip is visible in the
    ///   test log rather than a silent pass.
    public static func sharedFile(_ relativePath: String) throws -> URL {
        let url = shared.appendingPathComponent(relativePath)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw XCTSkip("skipped: \(url.path) not found (the shared/ folder next to the repository holds the real models)")
        }
        return url
    }

    /// A fresh temporary directory, removed when `testCase` ends.
    public static func temporaryDirectory(for testCase: XCTestCase) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("mlconv-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        testCase.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }
}

/// A deterministic random number generator (SplitMix64), so random tests are reproducible.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// `count` uniform random floats in `range`, reproducible for a given `seed`.
public func randomFloats(count: Int, seed: UInt64 = 1, in range: ClosedRange<Float> = -1 ... 1) -> [Float] {
    var g = SeededGenerator(seed: seed)
    return (0..<count).map { _ in Float.random(in: range, using: &g) }
}

/// A float32 constant holding a copy of `values`.
/// - Precondition: `values.count` is the product of `shape`.
public func floatConstant(_ shape: [Int], _ values: [Float]) -> ConstantTensor {
    ConstantTensor(shape: shape, floats: values)
}

/// A float32 constant of `shape` with reproducible random values.
public func randomConstant(_ shape: [Int], seed: UInt64 = 1, in range: ClosedRange<Float> = -1 ... 1) -> ConstantTensor {
    floatConstant(shape, randomFloats(count: shape.reduce(1, *), seed: seed, in: range))
}

/// The largest |a[i] − b[i]|. Positions where both are NaN, or both the same infinity, count as
/// equal; a NaN against a number, or different lengths, give +∞.
public func maxAbsDiff(_ a: [Float], _ b: [Float]) -> Float {
    guard a.count == b.count else { return .infinity }
    var m: Float = 0
    for (x, y) in zip(a, b) {
        if x.isNaN || y.isNaN {
            if !(x.isNaN && y.isNaN) { return .infinity }
        } else if x.isInfinite || y.isInfinite {
            if x != y { return .infinity }
        } else {
            m = max(m, abs(x - y))
        }
    }
    return m
}

/// Asserts that `actual` and `expected` have the same length and differ by at most `tolerance`
/// anywhere (see `maxAbsDiff`); the failure shows the first offending index.
public func assertClose(_ actual: [Float], _ expected: [Float], tolerance: Float = 1e-5,
                        _ message: @autoclosure () -> String = "", file: StaticString = #filePath, line: UInt = #line) {
    let d = maxAbsDiff(actual, expected)
    guard d > tolerance else { return }
    let first = zip(actual, expected).enumerated().first { maxAbsDiff([$0.element.0], [$0.element.1]) > tolerance }
    let at = first.map { "first at [\($0.offset)]: \($0.element.0) vs expected \($0.element.1)" } ?? "lengths \(actual.count) vs \(expected.count)"
    XCTFail("max |diff| \(d) > \(tolerance); \(at). \(message())", file: file, line: line)
}
