// MARK: errors (issue 13): --max-memory for the runtime's buffers of one prediction.
import Diagnostics
import MLGraph

extension ExecutionPlan {
    /// Throws `MemoryLimitExceeded` when the buffers of one prediction at these shapes (the
    /// shared arena, the outputs buffer and the inputs, `MemoryPlan` sizes) exceed
    /// `MemoryLimit.current`. Called when a plan is made, before any arena is allocated.
    static func checkMemoryLimit(_ plan: MemoryPlan, graph typed: Graph) throws {
        var total = plan.arenaByteCount
        var overflow = false
        func add(_ n: Int) {
            let (s, o) = total.addingReportingOverflow(n)
            total = s; overflow = overflow || o
        }
        add(plan.outputByteCount)
        for i in typed.inputs {
            let (b, o) = i.type.elementCount.multipliedReportingOverflow(by: i.type.elementType.byteSize)
            overflow = overflow || o
            add(b)
        }
        let shapes = typed.inputs.map { "\($0.name) \(formatShape($0.type.shape))" }.joined(separator: ", ")
        let what = "the runtime's tensor arena (\(MemoryLimit.format(plan.arenaByteCount)) shared, outputs and inputs; inputs \(shapes))"
        if overflow { throw MemoryLimitExceeded(file: nil, what: what, requestedBytes: nil, limitBytes: MemoryLimit.current) }
        try MemoryLimit.check(bytes: total, for: what, file: nil)
    }
}
