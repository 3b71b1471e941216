import Foundation
import HDF5
import XCTest

/// Paths used by the HDF5 tests (private to this test target; Tests/TestSupport is owned
/// elsewhere).
enum HDF5TestPaths {
    /// The repository root: three levels above this file (Tests/HDF5Tests/HDF5TestPaths.swift).
    static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // HDF5Tests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // repository root

    /// `Fixtures/hdf5/<name>`, committed, made by `Scripts/make_hdf5_fixtures.py`.
    static func fixture(_ name: String) -> String {
        repositoryRoot.appendingPathComponent("Fixtures/hdf5/\(name)").path
    }

    /// `../shared/models/<name>` next to the repository (real, third-party models that must
    /// never be copied into the repository). Throws `XCTSkip` with a visible message when absent.
    static func sharedModel(_ name: String) throws -> String {
        let shared = repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared")
        let path = shared.appendingPathComponent("models/\(name)").path
        guard FileManager.default.fileExists(atPath: path) else {
            throw XCTSkip("real-model test skipped: \(path) not found (the shared/ folder next to "
                          + "the repository holds the real sample models)")
        }
        return path
    }

    /// A fresh temporary directory, removed at the end of `testCase`.
    static func temporaryDirectory(for testCase: XCTestCase) throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("mlconv-hdf5-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        testCase.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }
}

/// Asserts that `body` throws an `HDF5Error` of kind `kind` and returns it for further checks.
@discardableResult
func assertHDF5Error<T>(_ kind: HDF5Error.Kind, file: StaticString = #filePath, line: UInt = #line,
                        _ body: () throws -> T) -> HDF5Error? {
    do {
        let value = try body()
        XCTFail("expected HDF5Error(\(kind)), got a value: \(value)", file: file, line: line)
        return nil
    } catch let error as HDF5Error {
        XCTAssertEqual(error.kind, kind, "wrong kind; error was:\n\(error)", file: file, line: line)
        return error
    } catch {
        XCTFail("expected HDF5Error, got \(type(of: error)): \(error)", file: file, line: line)
        return nil
    }
}
