import Foundation
import MLGraph
import MLPasses
import MLRuntime
import XCTest

/// Writes mlconv's quantization of the tensors that `Scripts/check_quantization.py` prepared, so the
/// script can compare them with coremltools. Skipped unless `MLCONV_QUANT_CHECK_DIR` is set.
///
/// Input: `$MLCONV_QUANT_CHECK_DIR/manifest.json` = [{"name", "shape", "axis" (null = per tensor),
/// "kmeans_bits": [..]}] and `<name>.npy` (float32). Output in the same directory:
/// `ours.json` = {name: {"linear_scale"|"linear_bias"|"symmetric_scale"|"symmetric_bias"|
/// "kmeans_lut": {bits: [float]}}}, `ours_metrics.json` = {"metrics": {name: {"kmeans": {bits:
/// {"sqnr" (dB, null when exact), "seconds"}}}}}, and the packed codes as
/// `ours_<name>_linear<bits>.bin`, `ours_<name>_symmetric.bin`, `ours_<name>_kmeans<bits>.bin`.
final class PeerCheckExportTests: XCTestCase {
    struct Item: Decodable {
        var name: String
        var shape: [Int]
        var axis: Int?
        var kmeans_bits: [Int]
    }

    func testExportForCoremltoolsComparison() throws {
        guard let dirPath = ProcessInfo.processInfo.environment["MLCONV_QUANT_CHECK_DIR"], !dirPath.isEmpty else {
            throw XCTSkip("skipped: set MLCONV_QUANT_CHECK_DIR (Scripts/check_quantization.py does) to export for the peer check")
        }
        let dir = URL(fileURLWithPath: dirPath)
        let items = try JSONDecoder().decode([Item].self, from: Data(contentsOf: dir.appendingPathComponent("manifest.json")))
        var out: [String: [String: [String: [String: Double?]]]] = [:]
        var arrays: [String: [String: [String: [Float]]]] = [:]  // name → mode → bits → floats
        func write(_ bytes: [UInt8], _ file: String) throws {
            try Data(bytes).write(to: dir.appendingPathComponent(file))
        }
        for item in items {
            let w = try NPY.read(contentsOf: dir.appendingPathComponent("\(item.name).npy")).scalars
            XCTAssertEqual(w.count, item.shape.reduce(1, *), item.name)
            var entry: [String: [String: [String: Double?]]] = [:]
            var arr: [String: [String: [Float]]] = [:]
            // An axis of -1 (or a rank ≤ 1 shape) means one scale for the tensor.
            let axis = item.axis ?? 0
            for bits in 1...8 {
                let q = try linearQuantize(w, shape: item.shape, axis: axis, bits: bits)
                try write(q.packed, "ours_\(item.name)_linear\(bits).bin")
                arr["linear_scale", default: [:]]["\(bits)"] = q.scale
                arr["linear_bias", default: [:]]["\(bits)"] = q.bias
            }
            let s = try linearSymmetricQuantize(w, shape: item.shape, axis: axis)
            try write(s.packed, "ours_\(item.name)_symmetric.bin")
            arr["symmetric_scale", default: [:]]["8"] = s.scale
            arr["symmetric_bias", default: [:]]["8"] = s.bias
            for bits in item.kmeans_bits {
                let t0 = Date()
                let q = try kmeansLUTQuantize(w, bits: bits)
                let seconds = Date().timeIntervalSince(t0)
                try write(q.packed, "ours_\(item.name)_kmeans\(bits).bin")
                arr["kmeans_lut", default: [:]]["\(bits)"] = q.table
                let db = sqnr(w, q.dequantized())
                entry["kmeans", default: [:]]["\(bits)"] = ["sqnr": db.isFinite ? db : nil, "seconds": seconds]
            }
            out[item.name] = entry
            arrays[item.name] = arr
        }
        // Floats are written with enough digits to round-trip float32 exactly.
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys]
        try enc.encode(["metrics": out]).write(to: dir.appendingPathComponent("ours_metrics.json"))
        try enc.encode(arrays).write(to: dir.appendingPathComponent("ours.json"))
    }
}
