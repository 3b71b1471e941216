import MLGraph

/// Registry of oneDNN kernels (one file per op under Kernels/DNNL/).
enum OptimizedKernels {
    static let table: [String: KernelFactory] = [:]
}
