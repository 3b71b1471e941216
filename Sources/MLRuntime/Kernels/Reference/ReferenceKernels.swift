import MLGraph

/// Registry of reference kernels (one file per op under Kernels/Reference/).
enum ReferenceKernels {
    static let table: [String: KernelFactory] = [:]
}
