import Foundation
import MLGraph

/// What the weight passes (`Float16Pass`, `QuantizeLinearPass`, `QuantizeKMeansPass`) share: a
/// `WeightQuantizer` and the report of the last run, behind a lock.
final class WeightPassCore: @unchecked Sendable {
    let quantizer: WeightQuantizer
    let progress: (@Sendable (Int, Int) -> Void)?
    private let lock = NSLock()
    private var report: QuantizationReport?

    init(quantizer: WeightQuantizer, progress: (@Sendable (Int, Int) -> Void)?) {
        self.quantizer = quantizer; self.progress = progress
    }

    var lastReport: QuantizationReport? { lock.withLock { report } }

    func apply(to graph: inout Graph) throws -> Bool {
        let (out, r, changed) = try quantizer.run(graph, progress: progress)
        lock.withLock { report = r }
        if changed { graph = out }
        return changed
    }
}
