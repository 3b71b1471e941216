import MLGraph
@testable import MLRuntime
import TestSupport
import XCTest

/// An NDArray (traps on a shape/count mismatch: a bug in the test itself).
func nd(_ shape: [Int], _ values: [Float]) -> NDArray { try! NDArray(shape: shape, scalars: values) }

/// 1, 2, 3, … in row-major order.
func iota(_ shape: [Int], from start: Float = 1) -> NDArray {
    nd(shape, (0..<shape.reduce(1, *)).map { start + Float($0) })
}

/// A float32 constant.
func const(_ shape: [Int], _ values: [Float]) -> ConstantTensor { floatConstant(shape, values) }

/// Runs a one-node graph `op(x0, x1, …) → y` through `Model` and returns y.
func runOp(_ op: Op, _ inputs: [NDArray], weights: [String: ConstantTensor] = [:],
           referenceOnly: Bool = true) throws -> NDArray {
    let names = inputs.indices.map { "x\($0)" }
    let graph = Graph(inputs: zip(names, inputs).map { ValueInfo(name: $0, type: TensorType($1.shape)) },
                      outputs: ["y"],
                      nodes: [Node(name: "op", op: op, inputs: names, outputs: ["y"], weights: weights)])
    let model = try Model(graph: graph, configuration: .init(referenceOnly: referenceOnly))
    return try model.prediction(from: Dictionary(uniqueKeysWithValues: zip(names, inputs)))["y"]!
}

/// Asserts that `body` throws a `RuntimeError` equal to `expected`.
func assertRuntimeError<T>(_ expected: RuntimeError, file: StaticString = #filePath, line: UInt = #line,
                           _ body: () throws -> T) {
    do {
        let v = try body()
        XCTFail("expected \(expected), got a value: \(v)", file: file, line: line)
    } catch let e as RuntimeError {
        XCTAssertEqual(e, expected, file: file, line: line)
    } catch {
        XCTFail("expected RuntimeError \(expected), got \(type(of: error)): \(error)", file: file, line: line)
    }
}

/// Σ a[i]·b[i] in Double.
func dot(_ a: [Float], _ b: [Float]) -> Double {
    zip(a, b).reduce(0.0) { $0 + Double($1.0) * Double($1.1) }
}

/// Runs `kernel` directly on copies of `inputs` into NaN-filled outputs (so an output the kernel
/// never writes shows up as NaN).
func runKernel(_ kernel: Kernel, _ inputs: [[Float]], outputCounts: [Int]) -> [[Float]] {
    let ins = inputs.map { v -> UnsafeMutablePointer<Float> in
        let p = UnsafeMutablePointer<Float>.allocate(capacity: max(v.count, 1))
        p.initialize(from: v, count: v.count)
        return p
    }
    let outs = outputCounts.map { n -> UnsafeMutablePointer<Float> in
        let p = UnsafeMutablePointer<Float>.allocate(capacity: max(n, 1))
        p.initialize(repeating: .nan, count: n)
        return p
    }
    defer { ins.forEach { $0.deallocate() }; outs.forEach { $0.deallocate() } }
    kernel.run(inputs: ins.map { UnsafePointer($0) }, outputs: outs)
    return zip(outs, outputCounts).map { Array(UnsafeBufferPointer(start: $0, count: $1)) }
}

/// Runs `kernel` on typed `inputs` (raw buffers of each array's element type; `run(typedInputs:…)`
/// for a `TypedKernel`, else the float entry point) into outputs of `outputTypes` pre-filled with
/// 0xFF bytes (NaN for floats, −1 for integers), returned as typed arrays.
func runTypedKernel(_ kernel: Kernel, _ inputs: [NDArray], outputTypes: [TensorType]) throws -> [NDArray] {
    let ins = inputs.map { a -> UnsafeMutableRawPointer in
        let n = a.count * a.elementType.byteSize
        let p = UnsafeMutableRawPointer.allocate(byteCount: max(n, 1), alignment: 64)
        a.withUnsafeBytes { if let b = $0.baseAddress { p.copyMemory(from: b, byteCount: n) } }
        return p
    }
    let outs = outputTypes.map { t -> UnsafeMutableRawPointer in
        let n = t.elementCount * t.elementType.byteSize
        let p = UnsafeMutableRawPointer.allocate(byteCount: max(n, 1), alignment: 64)
        p.initializeMemory(as: UInt8.self, repeating: 0xFF, count: max(n, 1))
        return p
    }
    defer { ins.forEach { $0.deallocate() }; outs.forEach { $0.deallocate() } }
    if let t = kernel as? TypedKernel {
        t.run(typedInputs: ins.map { UnsafeRawPointer($0) }, typedOutputs: outs)
    } else {
        kernel.run(inputs: ins.map { UnsafePointer($0.assumingMemoryBound(to: Float.self)) },
                   outputs: outs.map { $0.assumingMemoryBound(to: Float.self) })
    }
    return try zip(outs, outputTypes).map { p, t in
        try NDArray(shape: t.shape, elementType: t.elementType,
                    bytes: Array(UnsafeRawBufferPointer(start: p, count: t.elementCount * t.elementType.byteSize)))
    }
}

/// Random arrays for `types`: float32 as `randomFloats`; integers in 0…2; bools; float16.
func randomTypedArrays(_ types: [TensorType], seed: UInt64) throws -> [NDArray] {
    try types.enumerated().map { i, t in
        let f = randomFloats(count: t.elementCount, seed: seed + UInt64(i))
        let a = try NDArray(shape: t.shape, scalars: t.elementType.isInteger ? f.map { Float(Int(abs($0) * 2.99)) } : f)
        return a.converted(to: t.elementType == .bool ? .bool : t.elementType)
    }
}
