// MARK: thread pool (issue 12): how oneDNN's OpenMP workers wait, as the executable set it.
import CMLConvStartup
import Foundation

/// libgomp's wait policy in this process (see `CMLConvStartup/include/mlconv_startup.h` and
/// docs/PERFORMANCE.md, "Thread pool"), for `predict --benchmark` and `--help`.
enum ThreadWaitPolicy {
    /// "GOMP_SPINCOUNT=3000 (mlconv's default)", "OMP_WAIT_POLICY=passive (environment)", …
    /// (MLCONV_GOMP_DEFAULT=1 marks the value mlconv added.)
    static var summary: String {
        let environment = ProcessInfo.processInfo.environment
        let settings = ["OMP_WAIT_POLICY", "GOMP_SPINCOUNT"].compactMap { name in
            environment[name].map { "\(name)=\($0)" }
        }
        switch String(cString: mlconv_thread_wait_policy_source()) {
        case "mlconv": return settings.joined(separator: " ") + " (mlconv's default)"
        case "environment": return settings.joined(separator: " ") + " (environment)"
        default: return settings.isEmpty ? "libgomp's default" : settings.joined(separator: " ") + " (environment)"
        }
    }
}
