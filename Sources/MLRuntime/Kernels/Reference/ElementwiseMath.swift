import MLGraph

// MARK: elementwise math ops (reference kernels)

/// Reference `Op.unary`: y = `UnaryAttributes.apply`(x) elementwise, any shape. In place.
final class ReferenceUnary: Kernel {
    let attributes: UnaryAttributes
    let count: Int

    var supportsInPlace: Bool { true }

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .unary(a) = ctx.node.op else { return nil }
        return ReferenceUnary(attributes: a, count: ctx.inputTypes[0].elementCount)
    }

    private init(attributes: UnaryAttributes, count: Int) { self.attributes = attributes; self.count = count }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0]
        for i in 0..<count { y[i] = attributes.apply(x[i]) }
    }
}

/// Reference `Op.clip`: y = min(max(x, alpha), beta) elementwise (NaN stays NaN). In place.
final class ReferenceClip: Kernel {
    let alpha: Float, beta: Float
    let count: Int

    var supportsInPlace: Bool { true }

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .clip(alpha, beta) = ctx.node.op else { return nil }
        return ReferenceClip(alpha: alpha, beta: beta, count: ctx.inputTypes[0].elementCount)
    }

    private init(alpha: Float, beta: Float, count: Int) { self.alpha = alpha; self.beta = beta; self.count = count }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let x = inputs[0], y = outputs[0]
        for i in 0..<count { y[i] = Op.clipValue(x[i], alpha: alpha, beta: beta) }
    }
}

/// Reference `Op.binary`: f(x, y) with NumPy broadcasting to the output shape; y is input 1 or
/// the node's constant weight "y". In place when x already has the output's shape.
final class ReferenceBinary: Kernel {
    let function: BinaryFunction
    let outShape: [Int]
    let strides: [[Int]]
    /// The constant second operand (weight "y"), if any.
    let constant: [Float]?
    let inPlace: Bool

    var supportsInPlace: Bool { inPlace }

    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .binary(f) = ctx.node.op else { return nil }
        let out = ctx.outputTypes[0].shape
        var shapes = ctx.inputTypes.map(\.shape)
        var constant: [Float]?
        if let y = ctx.node.weights["y"] {
            constant = try ctx.weightValues("y")
            shapes.append(y.shape)
        }
        guard shapes.count == 2 else {
            throw RuntimeError.kernelFailure(node: ctx.node.name, message: "binary: expects 2 operands, found \(shapes.count)")
        }
        return ReferenceBinary(function: f, outShape: out, strides: shapes.map { broadcastStrides($0, to: out) },
                               constant: constant, inPlace: shapes[0] == out)
    }

    private init(function: BinaryFunction, outShape: [Int], strides: [[Int]], constant: [Float]?, inPlace: Bool) {
        self.function = function; self.outShape = outShape; self.strides = strides; self.constant = constant; self.inPlace = inPlace
    }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        if let constant {
            constant.withUnsafeBufferPointer { c in compute(inputs[0], c.baseAddress!, outputs[0]) }
        } else {
            compute(inputs[0], inputs[1], outputs[0])
        }
    }

    private func compute(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>) {
        var it = Odometer(shape: outShape, strides: strides)
        for o in 0..<outShape.reduce(1, *) {
            y[o] = function.apply(a[it.offsets[0]], b[it.offsets[1]])
            it.advance()
        }
    }
}
