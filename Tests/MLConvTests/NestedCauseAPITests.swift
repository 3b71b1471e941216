// MARK: errors (issue 13): nested causes seen through the public API (`import MLConv`).
import Foundation
import MLConv
import XCTest

final class NestedCauseAPITests: XCTestCase {
    /// A cache directory that cannot be created (below a regular file): `.cacheUnavailable`
    /// keeps the system's error as a value, and the rendered message prints it as its cause.
    func testUnusableCacheDirectoryKeepsTheSystemError() throws {
        let dir = try Paths.temporary(self)
        let blocker = dir.appendingPathComponent("file")
        try Data("x".utf8).write(to: blocker)
        let config = MLModelConfiguration(cacheDirectory: blocker.appendingPathComponent("cache"))
        XCTAssertThrowsError(try MLModel.compileModel(at: Paths.fixture("demo/digits_cnn.h5"), configuration: config)) { error in
            guard case let .cacheUnavailable(directory, reason, cause)? = error as? MLModelError else { return XCTFail("\(error)") }
            XCTAssertTrue(directory.hasPrefix(blocker.path), directory)
            XCTAssertEqual(reason, "cannot create it")
            guard let c = cause?.error else { return XCTFail("the system error is not kept: \(error)") }
            XCTAssertEqual((c as NSError).domain, NSCocoaErrorDomain, "\(c)")
            XCTAssertEqual((error as? any MLConvDiagnostic)?.diagnosticCauses.count, 1)
            let message = diagnosticMessage(for: error)
            XCTAssertTrue(message.contains("\n  caused by: \(c.localizedDescription)"), message)
            XCTAssertTrue("\(error)".contains(c.localizedDescription), "\(error)")
            XCTAssertEqual(Diagnostic.category(of: error), .io)
        }
    }
}
