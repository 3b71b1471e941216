import Diagnostics
import Foundation
import MLConvCLI
import TestSupport
import XCTest

/// Replays every input of Fixtures/crashes/cases.json (made by Scripts/make_crash_fixtures.py):
/// each command must end in a typed error naming the file — not a trap, a hang or success.
final class CrashRegressionTests: XCTestCase {
    struct Case: Decodable { var file: String; var commands: [[String]]; var why: String }

    func testEveryRecordedCrashIsATypedError() throws {
        let root = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/crashes")
        let cases = try JSONDecoder().decode([Case].self, from: Data(contentsOf: root.appendingPathComponent("cases.json")))
        XCTAssertGreaterThanOrEqual(cases.count, 35, "Fixtures/crashes/cases.json lost cases: regenerate with Scripts/make_crash_fixtures.py")
        for c in cases {
            let file = root.appendingPathComponent(c.file).path
            XCTAssertTrue(FileManager.default.fileExists(atPath: file), "\(c.file) is missing: run Scripts/make_crash_fixtures.py")
            for command in c.commands {
                let tmp = try TestPaths.temporaryDirectory(for: self).path
                let args = command.map {
                    $0.replacingOccurrences(of: "{file}", with: file).replacingOccurrences(of: "{tmp}", with: tmp)
                        .replacingOccurrences(of: "{fixtures}", with: TestPaths.repositoryRoot.appendingPathComponent("Fixtures").path)
                }
                let r = CLIRun(args)
                // A typed refusal: input file (1), usage (2), unsupported model (4) or resource limit (6)
                // (issue 13's named exit codes) — never success, a trap or internal (70).
                let refused: [DiagnosticCategory] = [.inputFile, .usage, .unsupportedModel, .resourceLimit]
                XCTAssertTrue(refused.map(\.exitCode).contains(r.status), "\(c.file) \(command): status \(r.status) (\(c.why)); stdout: \(r.out.prefix(300))")
                XCTAssertTrue(r.err.contains((c.file as NSString).lastPathComponent), "\(c.file) \(command): the error does not name the file: \(r.err.prefix(500))")
            }
        }
    }
}
