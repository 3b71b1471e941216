// MARK: errors (issue 13): nested causes kept as values.
import AtomicFile
import CoreMLFormat
import Diagnostics
import Foundation
import HDF5
import KerasFrontend
import MLBundle
@testable import MLConvCLI
import MLGraph
import MLPrediction
import MLRuntime
import TestSupport
import XCTest

/// Errors that wrap another one keep it as a value: `diagnosticCauses` lists it with its own
/// type and fields, `DiagnosticRenderer` prints it on a "caused by:" line (the outer summary no
/// longer pastes its text), `description` still carries the whole text, and the exit status is
/// the category of the outermost error.
///
/// (In MLConvCLITests because it reaches every module that wraps errors; DiagnosticsTests only
/// depends on Diagnostics.)
final class NestedCauseTests: XCTestCase {
    let root = TestPaths.repositoryRoot
    func fixture(_ p: String) -> URL { root.appendingPathComponent(p) }

    /// The first 2 KB of Fixtures/hdf5/keras_model.h5, in a temporary directory.
    func truncatedKerasFile() throws -> URL {
        let data = try Data(contentsOf: fixture("Fixtures/hdf5/keras_model.h5"))
        XCTAssertGreaterThan(data.count, 2048, "the fixture must be longer than what is kept")
        let url = try TestPaths.temporaryDirectory(for: self).appendingPathComponent("truncated.h5")
        try data.prefix(2048).write(to: url)
        return url
    }

    /// A path that cannot be written, even by root: below a regular file (ENOTDIR).
    func unwritablePath(_ name: String) throws -> URL {
        let blocker = try TestPaths.temporaryDirectory(for: self).appendingPathComponent("file")
        try Data("x".utf8).write(to: blocker)
        return blocker.appendingPathComponent(name)
    }

    /// `body` throws an `Outer` whose first cause is a `Cause`, in `category`; the rendering
    /// has the cause's first line on a "caused by:" line; `description` still has the cause's
    /// text and the summary does not.
    @discardableResult
    func assertKeepsCause<Outer: Error, Cause: Error>(
        _ body: () throws -> Void, _ outer: Outer.Type, causedBy cause: Cause.Type, category: DiagnosticCategory,
        file: StaticString = #filePath, line: UInt = #line
    ) -> (Outer, Cause)? {
        do {
            try body()
            XCTFail("no error was thrown", file: file, line: line)
            return nil
        } catch {
            guard let o = error as? Outer else {
                XCTFail("expected \(Outer.self), got \(type(of: error)): \(error)", file: file, line: line)
                return nil
            }
            let causes = (error as? any MLConvDiagnostic)?.diagnosticCauses ?? []
            guard causes.count == 1, let c = causes.first as? Cause else {
                XCTFail("expected one \(Cause.self) in diagnosticCauses of \(error), found \(causes)", file: file, line: line)
                return nil
            }
            XCTAssertEqual(Diagnostic.category(of: error), category, "\(error)", file: file, line: line)
            let causeText = Diagnostic(c).summary
            let first = causeText.split(separator: "\n").first.map(String.init) ?? ""
            let rendered = DiagnosticRenderer.render(error)
            XCTAssertTrue(rendered.contains("\n  caused by: " + first), rendered, file: file, line: line)
            XCTAssertTrue(String(describing: error).contains(causeText), "description lost the cause: \(error)", file: file, line: line)
            XCTAssertFalse(Diagnostic(error).summary.contains(first), "the summary repeats the cause: \(Diagnostic(error).summary)",
                           file: file, line: line)
            XCTAssertEqual(Diagnostic(error).causes.first?.errorType, String(describing: type(of: c as Any)), file: file, line: line)
            return (o, c)
        }
    }

    // MARK: Keras → HDF5

    func testTruncatedKerasFileKeepsTheHDF5Error() throws {
        let url = try truncatedKerasFile()
        let r = assertKeepsCause({ _ = try KerasConverter().convert(modelAt: url) },
                                 KerasConversionError.self, causedBy: HDF5Error.self, category: .inputFile)
        guard let (e, h) = r else { return }
        guard case let .hdf5(file, cause) = e else { return XCTFail("\(e)") }
        XCTAssertEqual(file, url.path)
        XCTAssertEqual(cause, h)
        XCTAssertEqual(h.kind, .corruptFile)
        XCTAssertEqual(h.file, url.path)
        let text = DiagnosticRenderer.render(e, prefix: "mlconv keras: ")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        XCTAssertEqual(lines.first, "mlconv keras: error: \(url.path): cannot read the HDF5 file", text)
        XCTAssertEqual(lines.dropFirst().first, "  caused by: HDF5 error (corrupt file): \(h.summary)", text)
        // Every line of the HDF5 error (libhdf5 stack, hint) is printed, indented under the cause.
        for l in h.description.split(separator: "\n").dropFirst() {
            XCTAssertTrue(lines.contains("    " + l), "'\(l)' missing from\n\(text)")
        }
        XCTAssertEqual(lines.filter { $0.contains("hint:") }.count, 1, text)
        // `description` is the text it always was.
        XCTAssertEqual(e.description, "\(url.path): cannot read the HDF5 file:\n\(h.description)")
    }

    /// The CLI's exit status is the category of the outermost error (here input-file, 1), and its
    /// stderr shows the cause.
    func testCLIExitStatusOfANestedErrorIsTheOutermostCategory() throws {
        let url = try truncatedKerasFile()
        let out = url.deletingLastPathComponent().appendingPathComponent("x.mlbundle").path
        let r = CLIRun(["keras", url.path, "-o", out])
        XCTAssertEqual(r.status, DiagnosticCategory.inputFile.exitCode, r.err)
        XCTAssertTrue(r.err.contains("mlconv keras: error: \(url.path): cannot read the HDF5 file\n  caused by: HDF5 error (corrupt file)"), r.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }

    /// When the cause's category differs, the outer one decides the status.
    func testExitStatusIsTheOuterCategoryNotTheCauses() {
        let inner = GraphError.invalidNode(node: "dense", op: "matmul", message: "input 1 has 3 columns, expected 4")
        let outer = KerasConversionError.invalidGraph(file: "m.h5", layer: "dense", className: "Dense", message: "",
                                                      cause: DiagnosticCause(inner))
        XCTAssertEqual(Diagnostic.category(of: inner), .inputFile)
        XCTAssertEqual(MLConv.exitStatus(for: outer), DiagnosticCategory.internal.exitCode)
        XCTAssertEqual(outer.description.components(separatedBy: "\n").first,
                       "m.h5: layer 'dense' (Dense): the converted graph is invalid: node 'dense' (matmul): input 1 has 3 columns, expected 4")
        let text = DiagnosticRenderer.render(outer)
        XCTAssertTrue(text.hasPrefix("error: m.h5: layer 'dense' (Dense): the converted graph is invalid\n"), text)
        XCTAssertTrue(text.contains("\n  caused by: node 'dense' (matmul): input 1 has 3 columns, expected 4"), text)
    }

    /// A `--max-memory` refusal inside libhdf5 reading: the HDF5Error keeps the MemoryLimitExceeded.
    func testMemoryLimitRefusalKeepsMemoryLimitExceeded() throws {
        MemoryLimit.set(4096)
        defer { MemoryLimit.set(nil) }
        let r = assertKeepsCause({ _ = try KerasConverter().convert(modelAt: self.fixture("Fixtures/demo/digits_cnn.h5")) },
                                 HDF5Error.self, causedBy: MemoryLimitExceeded.self, category: .resourceLimit)
        guard let (h, m) = r else { return }
        XCTAssertEqual(h.kind, .memoryLimitExceeded)
        XCTAssertEqual(m.limitBytes, 4096)
        XCTAssertTrue(DiagnosticRenderer.render(h).contains("4.0 KiB"))
    }

    // MARK: Keras architecture and hooks

    func testArchitectureJSONSyntaxErrorKeepsTheJSONError() {
        let r = assertKeepsCause({ _ = try KerasModelConfig.parse(text: "{\"class_name\": ", file: "arch.json") },
                                 KerasConversionError.self, causedBy: KerasJSONError.self, category: .inputFile)
        guard let (e, j) = r else { return }
        guard case let .invalidArchitecture(file, message, _) = e else { return XCTFail("\(e)") }
        XCTAssertEqual(file, "arch.json")
        XCTAssertEqual(message, "not JSON")
        XCTAssertGreaterThan(j.offset, 0)
    }

    func testUnreadableArchitectureSidecarKeepsTheSystemError() throws {
        let missing = try TestPaths.temporaryDirectory(for: self).appendingPathComponent("missing.json")
        let r = assertKeepsCause({ _ = try KerasConverter().convert(modelAt: self.fixture("Fixtures/demo/digits_cnn.h5"), architectureJSON: missing) },
                                 KerasConversionError.self, causedBy: (any Error).self, category: .inputFile)
        guard let (e, c) = r else { return }
        XCTAssertEqual((c as NSError).domain, NSCocoaErrorDomain, "\(c)")
        XCTAssertEqual(Diagnostic.category(of: c), .inputFile)
        guard case let .invalidArchitecture(file, message, _) = e else { return XCTFail("\(e)") }
        XCTAssertEqual(file, missing.path)
        XCTAssertEqual(message, "cannot read the file")
    }

    func testUnreadableHooksFileKeepsTheSystemError() throws {
        let missing = try TestPaths.temporaryDirectory(for: self).appendingPathComponent("hooks.json")
        let r = assertKeepsCause({ _ = try KerasHooksFile.load(contentsOf: missing) },
                                 KerasHookSpecError.self, causedBy: (any Error).self, category: .usage)
        guard let (e, c) = r else { return }
        XCTAssertEqual(Diagnostic.category(of: c), .inputFile)
        XCTAssertEqual(e.ownMessage, "\(missing.path): cannot read the hooks file")
        XCTAssertTrue(e.message.hasPrefix(e.ownMessage + ": "), e.message)
    }

    // MARK: Core ML import

    /// An ML program whose weight.bin is cut short: every op reading a blob is a layer problem
    /// whose `cause` is the `MILBlobError` (its text still on the problem's line).
    func testDamagedWeightBlobFileIsKeptOnEachLayerProblem() throws {
        let source = fixture("Fixtures/mlprogram/gru_last_fp16/model.mlpackage")
        let package = try TestPaths.temporaryDirectory(for: self).appendingPathComponent("model.mlpackage")
        try FileManager.default.copyItem(at: source, to: package)
        let blob = package.appendingPathComponent("Data/com.apple.CoreML/weights/weight.bin")
        try Data(try Data(contentsOf: blob).prefix(40)).write(to: blob)
        let spec = try Spec.Model.load(contentsOf: package.path)
        let root = try MLPackage.read(at: package.path).rootModelPath
        XCTAssertThrowsError(try MILImporter.importModel(spec, fileName: "model.mlpackage", modelPath: (root as NSString).deletingLastPathComponent)) { error in
            guard case let .unsupportedLayers(_, problems)? = error as? CoreMLImportError else { return XCTFail("\(error)") }
            // The ops reading a blob keep the MILBlobError; ops downstream of them (and a loop
            // whose body holds them) are listed without a cause.
            let blobProblems = problems.filter { $0.cause != nil }
            XCTAssertFalse(blobProblems.isEmpty, "\(error)")
            for p in blobProblems {
                guard let b = p.cause?.error as? MILBlobError else { return XCTFail("\(p) keeps no MILBlobError") }
                XCTAssertEqual(p.reason, b.description, "\(p)")
                XCTAssertTrue("\(error)".contains(p.reason))
            }
            let e = error as? CoreMLImportError
            XCTAssertEqual(e?.diagnosticCauses.count, problems.count == 1 ? 1 : 0)
        }
    }

    // MARK: writers: the AtomicFileError is kept

    func testCoreMLModelWriteFailureKeepsTheAtomicFileError() throws {
        let model = try Spec.Model.load(contentsOf: fixture("Fixtures/flexible/enumerated_cnn.mlmodel").path)
        let target = try unwritablePath("out.mlmodel")
        let r = assertKeepsCause({ try model.write(toFile: target.path) },
                                 CoreMLFormatError.self, causedBy: AtomicFileError.self, category: .io)
        XCTAssertEqual(r?.1.path, target.path)
        XCTAssertEqual(r?.1.operation, .createTemporary)
        // The case is `.unreadable` (as before), but the message says what failed.
        XCTAssertTrue(r?.0.description.hasPrefix("\(target.path): cannot write the file (cannot create a temporary file in") ?? false,
                      r?.0.description ?? "")
    }

    func testWeightBlobWriteFailureKeepsTheAtomicFileError() throws {
        let target = try unwritablePath("weight.bin")
        assertKeepsCause({ try MILBlobWriter().write(toFile: target.path) },
                         MLProgramExportError.self, causedBy: AtomicFileError.self, category: .io)
    }

    func testNPYWriteAndReadFailuresKeepTheirCauses() throws {
        let target = try unwritablePath("a.npy")
        assertKeepsCause({ try NPY.write(try NDArray(shape: [2], scalars: [1, 2]), to: target) },
                         NPYError.self, causedBy: AtomicFileError.self, category: .io)
        let missing = try TestPaths.temporaryDirectory(for: self).appendingPathComponent("missing.npy")
        let r = assertKeepsCause({ _ = try NPY.read(contentsOf: missing) }, NPYError.self, causedBy: (any Error).self, category: .inputFile)
        XCTAssertEqual(r.map { Diagnostic.category(of: $0.1) }, .inputFile)
    }

    func testBundleWriteFailureKeepsTheAtomicFileError() throws {
        let graph = try KerasConverter().convert(modelAt: fixture("Fixtures/demo/digits_cnn.h5"))
        let target = try unwritablePath("out.mlbundle")
        let r = assertKeepsCause({ try BundleWriter.write(graph, to: target, producer: "test") },
                                 BundleError.self, causedBy: AtomicFileError.self, category: .io)
        guard let (e, _) = r else { return }
        guard case let .writeFailed(file, reason, _) = e else { return XCTFail("\(e)") }
        XCTAssertEqual(file, target.path)
        XCTAssertEqual(reason, "")
        XCTAssertTrue(e.description.hasPrefix("cannot write \(target.path): cannot create a temporary file in"), e.description)
    }

    // MARK: prediction inputs

    func testMalformedFeatureJSONKeepsTheParserError() {
        let r = assertKeepsCause({ _ = try FeatureJSON.rows(from: Data("{oops".utf8), description: nil, model: "m") },
                                 FeatureError.self, causedBy: (any Error).self, category: .inputFile)
        guard let (e, c) = r else { return }
        XCTAssertEqual((c as NSError).domain, NSCocoaErrorDomain, "\(c)")
        guard case let .invalidValue(model, feature, reason, _) = e else { return XCTFail("\(e)") }
        XCTAssertEqual(model, "m")
        XCTAssertEqual(feature, "<json>")
        XCTAssertTrue(reason.hasPrefix("not valid JSON"), reason)
    }
}
