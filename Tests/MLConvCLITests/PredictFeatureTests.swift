// `mlconv predict` on classical Core ML models: typed --input values, and --inputs batches of
// 10,000 rows (JSON and CSV) in one process, outputs in input order, checked against the
// scikit-learn references of Fixtures/classical.
import Foundation
import TestSupport
import XCTest

final class PredictFeatureTests: XCTestCase {
    let root = TestPaths.repositoryRoot
    let names = ["sepal_length", "sepal_width", "petal_length", "petal_width"]

    private func fixture(_ name: String) throws -> (model: String, inputs: [[String: Any]], expected: [[String: Any]]) {
        let dir = root.appendingPathComponent("Fixtures/classical/\(name)")
        let inputs = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("inputs.json"))) as? [[String: Any]])
        let expected = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("expected.json"))) as? [[String: Any]])
        return (dir.appendingPathComponent("model.mlmodel").path, inputs, expected)
    }

    /// scikit-learn's Pipeline(StandardScaler, LogisticRegression) on iris, one row on the command line.
    func testTypedInputsPrintLabelAndProbabilities() throws {
        let f = try fixture("pipeline_classifier_scaler_logistic")
        let row = f.inputs[0]
        let args = ["predict", f.model] + names.flatMap { ["--input", "\($0)=\((row[$0] as! NSNumber).doubleValue)"] }
        let r = CLIRun(args)
        XCTAssertEqual(r.status, 0, r.err)
        let label = (f.expected[0]["classLabel"] as! NSNumber).int64Value
        XCTAssertTrue(r.out.contains("classLabel: \(label)\n"), r.out)
        let p = (f.expected[0]["classProbability"] as! [String: Any])["\(label)"] as! NSNumber
        XCTAssertTrue(r.out.contains(String(format: "  1. %lld  %.6g", label, p.doubleValue)), r.out)

        let bad = CLIRun(["predict", f.model, "--input", "sepal_length=long"])
        XCTAssertEqual(bad.status, 1)
        XCTAssertTrue(bad.err.contains("sepal_length") && bad.err.contains("expected a number (Double), found 'long'"), bad.err)
        let missing = CLIRun(["predict", f.model, "--input", "sepal_length=1"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.err.contains("'sepal_width'") && missing.err.contains("missing"), missing.err)
        let unknown = CLIRun(["predict", f.model, "--input", "colour=red"])
        XCTAssertEqual(unknown.status, 2)
        XCTAssertTrue(unknown.err.contains("no input 'colour'"), unknown.err)
    }

    /// 10,000 rows as JSON and as CSV in one process each; output row i is the reference of input
    /// row i mod n (the fixture's rows repeated), for every row.
    func testTenThousandRowBatchesKeepInputOrder() throws {
        let f = try fixture("pipeline_classifier_scaler_logistic")
        let n = f.inputs.count
        let count = 10_000
        let dir = try TestPaths.temporaryDirectory(for: self)
        let rows = (0..<count).map { f.inputs[$0 % n] }
        let json = dir.appendingPathComponent("batch.json")
        try JSONSerialization.data(withJSONObject: rows).write(to: json)
        var csv = names.joined(separator: ",") + "\n"
        for r in rows { csv += names.map { "\((r[$0] as! NSNumber).doubleValue)" }.joined(separator: ",") + "\n" }
        let csvURL = dir.appendingPathComponent("batch.csv")
        try csv.write(to: csvURL, atomically: true, encoding: .utf8)

        let outJSON = dir.appendingPathComponent("out.json").path
        let r1 = CLIRun(["predict", f.model, "--inputs", json.path, "--output-json", outJSON])
        XCTAssertEqual(r1.status, 0, r1.err)
        XCTAssertTrue(r1.out.contains("predicted 10000 rows"), r1.out)
        let out = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: outJSON))) as? [[String: Any]])
        XCTAssertEqual(out.count, count)
        for (i, o) in out.enumerated() {
            let want = f.expected[i % n]
            XCTAssertEqual((o["classLabel"] as? NSNumber)?.int64Value, (want["classLabel"] as! NSNumber).int64Value, "row \(i)")
            let probs = try XCTUnwrap(o["classProbability"] as? [String: Any], "row \(i)")
            for (k, v) in want["classProbability"] as! [String: Any] {
                XCTAssertEqual((probs[k] as? NSNumber)?.doubleValue ?? .nan, (v as! NSNumber).doubleValue, accuracy: 1e-6, "row \(i) class \(k)")
            }
        }

        let outCSV = dir.appendingPathComponent("out.csv").path
        let r2 = CLIRun(["predict", f.model, "--inputs", csvURL.path, "--output-csv", outCSV])
        XCTAssertEqual(r2.status, 0, r2.err)
        let lines = try String(contentsOfFile: outCSV, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, count + 1)
        XCTAssertEqual(lines[0], "classLabel,classProbability[0],classProbability[1],classProbability[2]")
        for (i, line) in lines.dropFirst().enumerated() {
            let cells = line.split(separator: ",")
            XCTAssertEqual(Int64(cells[0]), (f.expected[i % n]["classLabel"] as! NSNumber).int64Value, "csv row \(i)")
            let p1 = ((f.expected[i % n]["classProbability"] as! [String: Any])["1"] as! NSNumber).doubleValue
            XCTAssertEqual(Double(cells[2]) ?? .nan, p1, accuracy: 1e-9 + 1e-6 * abs(p1), "csv row \(i)")
        }

        let bad = dir.appendingPathComponent("bad.csv")
        try "sepal_length,sepal_width,petal_length,petal_width\n1,2,3,4\n1,2,x,4\n".write(to: bad, atomically: true, encoding: .utf8)
        let r3 = CLIRun(["predict", f.model, "--inputs", bad.path, "--output-csv", dir.appendingPathComponent("bad_out.csv").path])
        XCTAssertEqual(r3.status, 1)
        XCTAssertTrue(r3.err.contains("row 2") && r3.err.contains("petal_length"), r3.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("bad_out.csv").path))
    }

    /// Apple-proprietary stages: a typed error naming the stage, exit 1.
    func testProprietaryPipelineSaysWhereItRuns() throws {
        let url = try TestPaths.sharedFile("corpus/mlmodel/noahgift_cats_dogs.mlmodel")
        let r = CLIRun(["predict", url.path, "--input", "image=" + root.appendingPathComponent("Fixtures/demo/digit_7.png").path])
        XCTAssertEqual(r.status, 4)  // unsupported model (issue 13 exit codes)
        XCTAssertTrue(r.err.contains("stage 0 (visionFeaturePrint)") && r.err.contains("only Apple's Core ML framework"), r.err)
    }

    /// Regression: a directory given as --inputs was reported as missing; unreadable training data
    /// printed Foundation's raw NSCocoaErrorDomain dump.
    func testDirectoriesAndMissingFilesGetPlainErrors() throws {
        let f = try fixture("identity")
        let dir = try TestPaths.temporaryDirectory(for: self)
        let r = CLIRun(["predict", f.model, "--inputs", dir.path])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.err.contains("--inputs: '\(dir.path)' is a directory; give a file"), r.err)
        let u = CLIRun(["update", root.appendingPathComponent("Fixtures/update/dense_ce_sgd/model.mlmodel").path,
                        "--training-data", dir.appendingPathComponent("none.json").path, "-o", dir.appendingPathComponent("o.mlmodel").path])
        XCTAssertEqual(u.status, 1)
        XCTAssertFalse(u.err.contains("NSCocoaErrorDomain"), u.err)
        XCTAssertTrue(u.err.contains("none.json"), u.err)
    }

    /// Regressions from a newcomer's run: --output-dir silently did nothing, a repeated --input
    /// won silently, a batch row without a required feature got a --input hint with no row or
    /// file, and a 1-row batch printed like a single prediction.
    func testBatchAndOptionMistakesAreNamed() throws {
        let f = try fixture("pipeline_classifier_scaler_logistic")
        let dir = try TestPaths.temporaryDirectory(for: self)
        let one = names.flatMap { ["--input", "\($0)=1"] }
        let outDir = CLIRun(["predict", f.model] + one + ["--output-dir", dir.appendingPathComponent("o").path])
        XCTAssertEqual(outDir.status, 2)
        XCTAssertTrue(outDir.err.contains("--output-json FILE or --output-csv FILE"), outDir.err)
        let twice = CLIRun(["predict", f.model] + one + ["--input", "sepal_length=2"])
        XCTAssertEqual(twice.status, 2)
        XCTAssertTrue(twice.err.contains("--input sepal_length is given twice"), twice.err)
        let json = dir.appendingPathComponent("rows.json")
        try #"[{"sepal_length": 1, "sepal_width": 1, "petal_length": 1, "petal_width": 1}, {"sepal_length": 1, "sepal_width": 1, "petal_length": 1}]"#
            .write(to: json, atomically: true, encoding: .utf8)
        let missing = CLIRun(["predict", f.model, "--inputs", json.path])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.err.contains("--inputs rows.json row 2: input feature 'petal_width' is missing"), missing.err)
        XCTAssertFalse(missing.err.contains("--input petal_width="), missing.err)
        try #"[{"sepal_length": 1, "sepal_width": 1, "petal_length": 1, "petal_width": 1}]"#.write(to: json, atomically: true, encoding: .utf8)
        let single = CLIRun(["predict", f.model, "--inputs", json.path])
        XCTAssertEqual(single.status, 0, single.err)
        XCTAssertTrue(single.out.hasPrefix("{") && single.out.contains("predicted 1 rows"), single.out)
    }

    /// `compile` on a classical model says to run it with `predict` (it is not a graph).
    func testCompileOfAClassicalModelPointsToPredict() throws {
        let f = try fixture("pipeline_classifier_scaler_logistic")
        let dir = try TestPaths.temporaryDirectory(for: self)
        let r = CLIRun(["compile", f.model, "-o", dir.appendingPathComponent("x.mlbundle").path])
        XCTAssertEqual(r.status, 4)  // unsupported model (issue 13 exit codes)
        XCTAssertTrue(r.err.contains("mlconv runs it from the .mlmodel itself: `mlconv predict model.mlmodel"), r.err)
    }
}
