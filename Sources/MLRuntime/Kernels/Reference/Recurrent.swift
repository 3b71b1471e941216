import MLGraph

/// Reference `Op.recurrent` (Keras `SimpleRNN`, `LSTM`, `GRU`, optionally wrapped in
/// `Bidirectional`): the specification of the recurrent numerics, one batch row and one step at a
/// time, dot products accumulated in Double.
///
/// Per direction, with W = "kernel" [G·U, D], R = "recurrentKernel" [G·U, U], b = "bias" (absent = 0),
/// rb = "recurrentBias" (absent = 0), gate blocks in Keras order, σr = `recurrentActivation`,
/// act = `activation`, and x·W meaning Σ_i x[i]·W[row, i]:
/// - SimpleRNN: h = act(x·W + b + h·R + rb).
/// - LSTM (i, f, c̃, o): i = σr(x·Wi + bi + h·Ri + rbi), f = σr(…f), c̃ = act(…c), o = σr(…o);
///   c = f∘c + i∘c̃; h = o∘act(c).
/// - GRU (z, r, h̃), `resetAfter` false: z = σr(x·Wz + bz + h·Rz + rbz), r = σr(…r),
///   h̃ = act(x·Wh + bh + (r∘h)·Rh + rbh); h = z∘h + (1 − z)∘h̃. (Keras has no recurrent bias
///   here; one, if present, is added outside the reset gate, as ONNX `linear_before_reset = 0`.)
/// - GRU `resetAfter` true (Keras TF2 default): z, r as above; h̃ = act(x·Wh + bh + r∘(h·Rh + rbh)).
///
/// Sequence semantics (tf.keras / Keras 3 `backend.rnn`):
/// - A direction processes t = 0…T−1, or T−1…0 with go_backwards; its output sequence is in
///   processing order (so a `goBackwards` layer returns the sequence reversed, as Keras).
/// - Masking (mask input ≠ 0 = use the step): at a masked step the states keep their previous
///   values and the step's output is the previous step's output (zeros before the first unmasked
///   step) — except inside `Bidirectional` with `returnSequences`, where Keras forces
///   `zero_output_for_mask` and a masked step outputs zeros. go_backwards reads the mask reversed too.
/// - Without `returnSequences` the output is the last output in processing order.
/// - Bidirectional: the forward direction uses `goBackwards`, the backward one (weights suffixed
///   "_backward") the opposite; with `returnSequences` the backward output sequence is reversed
///   back to input order before merging: concat [fwd, bwd], sum fwd + bwd, mul fwd∘bwd,
///   ave (fwd + bwd)/2.
/// - States: initial states from the inputs (forward then backward; LSTM h then c) or zeros;
///   `returnState` outputs the final states in the same order.
///
/// - Complexity: directions·N·T·G·U·(D + U) multiply-adds. Single-threaded.
final class ReferenceRecurrent: Kernel {
    /// One direction's weights, dequantized.
    struct Direction {
        /// [G·U, D]
        let kernel: [Float]
        /// [G·U, U]
        let recurrentKernel: [Float]
        /// [G·U] (zeros when absent)
        let bias: [Float]
        /// [G·U] (zeros when absent)
        let recurrentBias: [Float]
        /// Whether this direction processes the sequence from the end.
        let goBackwards: Bool
    }

    /// The node's attributes.
    let a: RecurrentAttributes
    /// N, T, D of the input; U (units); G (gate blocks).
    let batch, steps, inputSize, units, gates: Int
    /// Forward, then backward for a Bidirectional layer.
    let directions: [Direction]
    /// Keras `zero_output_for_mask` (Bidirectional with return_sequences).
    let zeroOutputForMask: Bool

    /// The kernel for an `Op.recurrent` node (nil for other ops).
    /// - Throws: `RuntimeError.kernelFailure` for a malformed node (input count, weights).
    static func make(_ ctx: KernelContext) throws -> Kernel? {
        guard case let .recurrent(a) = ctx.node.op else { return nil }
        return try ReferenceRecurrent(ctx, a)
    }

    private init(_ ctx: KernelContext, _ a: RecurrentAttributes) throws {
        self.a = a
        let x = ctx.inputTypes.first?.shape ?? []
        func fail(_ m: String) -> RuntimeError { RuntimeError.kernelFailure(node: ctx.node.name, message: "\(ctx.node.op.name): \(m)") }
        guard x.count == 3 else { throw fail("expects an [N, T, D] input, found \(formatShape(x))") }
        guard a.units > 0 else { throw fail("units must be positive, found \(a.units)") }
        (batch, steps, inputSize) = (x[0], x[1], x[2])
        units = a.units
        gates = a.kind.gateCount
        let expectedInputs = 1 + (a.initialStates ? a.kind.stateCount * a.directions : 0) + (a.hasMask ? 1 : 0)
        guard ctx.inputTypes.count == expectedInputs else { throw fail("expects \(expectedInputs) inputs, found \(ctx.inputTypes.count)") }
        let g = gates * units
        var dirs: [Direction] = []
        for d in 0..<a.directions {
            let suffix = d == 0 ? "" : "_backward"
            let k = try ctx.weightValues("kernel" + suffix)
            let r = try ctx.weightValues("recurrentKernel" + suffix)
            let b = ctx.optionalWeightValues("bias" + suffix) ?? [Float](repeating: 0, count: g)
            let rb = ctx.optionalWeightValues("recurrentBias" + suffix) ?? [Float](repeating: 0, count: g)
            guard k.count == g * inputSize, r.count == g * units, b.count == g, rb.count == g else {
                throw fail("weights of direction \(d) do not match \(gates) gate(s) × \(units) units and input size \(inputSize)")
            }
            dirs.append(Direction(kernel: k, recurrentKernel: r, bias: b, recurrentBias: rb,
                                  goBackwards: d == 0 ? a.goBackwards : !a.goBackwards))
        }
        directions = dirs
        zeroOutputForMask = a.bidirectional != nil && a.returnSequences
    }

    /// Σ_i v[i]·m[row, i] over `n` columns, in Double.
    @inline(__always)
    private func dot(_ v: UnsafePointer<Float>, _ m: [Float], row: Int, _ n: Int) -> Double {
        var acc = 0.0
        for i in 0..<n { acc += Double(v[i]) * Double(m[row * n + i]) }
        return acc
    }

    /// One cell step for one batch row: reads x [D], h [U], c [U]; writes the new h and c.
    private func step(_ w: Direction, x: UnsafePointer<Float>, h: [Float], c: [Float]) -> (h: [Float], c: [Float]) {
        let u = units, d = inputSize
        let act = a.activation, rec = a.recurrentActivation
        // Input and recurrent pre-activations of every gate row.
        var gx = [Double](repeating: 0, count: gates * u), gh = [Double](repeating: 0, count: gates * u)
        h.withUnsafeBufferPointer { hp in
            for row in 0..<(gates * u) {
                gx[row] = Double(w.bias[row]) + dot(x, w.kernel, row: row, d)
                gh[row] = Double(w.recurrentBias[row]) + dot(hp.baseAddress!, w.recurrentKernel, row: row, u)
            }
        }
        var newH = [Float](repeating: 0, count: u), newC = c
        switch a.kind {
        case .simpleRNN:
            for j in 0..<u { newH[j] = act.apply(Float(gx[j] + gh[j])) }
        case .lstm:
            for j in 0..<u {
                let i = rec.apply(Float(gx[j] + gh[j]))
                let f = rec.apply(Float(gx[u + j] + gh[u + j]))
                let cc = act.apply(Float(gx[2 * u + j] + gh[2 * u + j]))
                let o = rec.apply(Float(gx[3 * u + j] + gh[3 * u + j]))
                newC[j] = f * c[j] + i * cc
                newH[j] = o * act.apply(newC[j])
            }
        case .gru:
            var z = [Float](repeating: 0, count: u), r = [Float](repeating: 0, count: u)
            for j in 0..<u {
                z[j] = rec.apply(Float(gx[j] + gh[j]))
                r[j] = rec.apply(Float(gx[u + j] + gh[u + j]))
            }
            var candidate = [Float](repeating: 0, count: u)
            if a.resetAfter {
                for j in 0..<u { candidate[j] = act.apply(Float(gx[2 * u + j] + Double(r[j]) * gh[2 * u + j])) }
            } else {
                let rh = (0..<u).map { r[$0] * h[$0] }
                rh.withUnsafeBufferPointer { rp in
                    for j in 0..<u {
                        let row = 2 * u + j
                        candidate[j] = act.apply(Float(gx[row] + dot(rp.baseAddress!, w.recurrentKernel, row: row, u)
                                                       + Double(w.recurrentBias[row])))
                    }
                }
            }
            for j in 0..<u { newH[j] = z[j] * h[j] + (1 - z[j]) * candidate[j] }
        }
        return (newH, newC)
    }

    func run(inputs: [UnsafePointer<Float>], outputs: [UnsafeMutablePointer<Float>]) {
        let u = units, t = steps, sc = a.kind.stateCount
        let mask: UnsafePointer<Float>? = a.hasMask ? inputs[inputs.count - 1] : nil
        for n in 0..<batch {
            // Per direction: outputs in processing order [T][U] and final states.
            var sequences: [[Float]] = [], finals: [[[Float]]] = []
            for (d, w) in directions.enumerated() {
                var h = [Float](repeating: 0, count: u), c = [Float](repeating: 0, count: u)
                if a.initialStates {
                    let first = 1 + d * sc
                    h = Array(UnsafeBufferPointer(start: inputs[first] + n * u, count: u))
                    if a.kind == .lstm { c = Array(UnsafeBufferPointer(start: inputs[first + 1] + n * u, count: u)) }
                }
                var previous = [Float](repeating: 0, count: u)
                var sequence = [Float](repeating: 0, count: t * u)
                for k in 0..<t {
                    let time = w.goBackwards ? t - 1 - k : k
                    var output: [Float]
                    if let mask, mask[n * t + time] == 0 {
                        output = zeroOutputForMask ? [Float](repeating: 0, count: u) : previous
                    } else {
                        (h, c) = step(w, x: inputs[0] + (n * t + time) * inputSize, h: h, c: c)
                        output = h
                    }
                    for j in 0..<u { sequence[k * u + j] = output[j] }
                    previous = output
                }
                sequences.append(sequence)
                finals.append(a.kind == .lstm ? [h, c] : [h])
            }
            writeOutput(n, sequences, outputs[0])
            if a.returnState {
                for d in 0..<directions.count {
                    for s in 0..<sc {
                        let dst = outputs[1 + d * sc + s] + n * u
                        for j in 0..<u { dst[j] = finals[d][s][j] }
                    }
                }
            }
        }
    }

    /// Writes batch row `n` of y from the per-direction output sequences (processing order).
    private func writeOutput(_ n: Int, _ sequences: [[Float]], _ y: UnsafeMutablePointer<Float>) {
        let u = units, t = steps
        // (output position, step of the forward sequence, step of the backward sequence)
        let positions: [(Int, Int, Int)] = a.returnSequences ? (0..<t).map { ($0, $0, t - 1 - $0) } : [(0, t - 1, t - 1)]
        let width = a.bidirectional == .concat ? 2 * u : u
        guard t > 0 else {
            // No steps: the last output is the zero "previous output" (sequences are empty).
            if !a.returnSequences { (y + n * width).update(repeating: 0, count: width) }
            return
        }
        for (p, kf, kb) in positions {
            let out = y + (a.returnSequences ? (n * t + p) * width : n * width)
            for j in 0..<u {
                let f = sequences[0][kf * u + j]
                guard let merge = a.bidirectional else { out[j] = f; continue }
                let b = sequences[1][kb * u + j]
                switch merge {
                case .concat: out[j] = f; out[u + j] = b
                case .sum: out[j] = f + b
                case .mul: out[j] = f * b
                case .ave: out[j] = (f + b) / 2
                }
            }
        }
    }
}
