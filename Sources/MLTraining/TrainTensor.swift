// Activations and gradients of the training engine.

/// A dense float32 tensor of the training engine: `shape` with the mini-batch first, values
/// row-major. Activations follow the IR's layout (NHWC, NC: docs/ARCHITECTURE.md "Conventions").
public struct TrainTensor: Equatable, Sendable {
    public var shape: [Int]
    public var values: [Float]

    /// - Precondition: `values.count` is the product of `shape` (internal invariant: callers
    ///   build tensors from checked shapes).
    public init(shape: [Int], values: [Float]) {
        self.shape = shape
        self.values = values
    }

    public init(zeros shape: [Int]) {
        self.shape = shape
        self.values = [Float](repeating: 0, count: shape.reduce(1, *))
    }

    public var count: Int { values.count }
    /// The mini-batch size (the first dimension).
    public var batch: Int { shape.first ?? 1 }
    /// Elements per sample.
    public var sampleCount: Int { shape.isEmpty ? 1 : shape.dropFirst().reduce(1, *) }

    /// Adds `other` elementwise (same shape).
    mutating func accumulate(_ other: TrainTensor) {
        for i in values.indices { values[i] += other.values[i] }
    }
}
