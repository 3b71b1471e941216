// MARK: elementwise math ops — Core ML export of unary, binary, clip and the activations added
// with issue 9, all with spec-1 NeuralNetwork layers (activation, unary, add, multiply, max, min).
import MLGraph

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ExportWriter {
    /// Core ML `UnaryFunctionLayerParams` written exactly: scale and shift as given (a scale of 0
    /// would read back as 1, so it is refused by the caller), epsilon as given — except that
    /// Core ML reads epsilon 0 as 1e-6, so an IR epsilon of 0 is written as the smallest positive
    /// float (x + 1e-45 = x for every x' except ±1e-45 itself).
    static func exactUnary(_ type: Spec.UnaryFunctionLayerParams.Operation, alpha: Float = 1, epsilon: Float = 0,
                           scale: Float = 1, shift: Float = 0) -> CoreMLLayer {
        .unary(Spec.UnaryFunctionLayerParams(type: type, alpha: alpha, epsilon: epsilon == 0 ? .leastNonzeroMagnitude : epsilon,
                                             shift: shift, scale: scale))
    }

    /// min(y, m) = −max(−y, −m) as LINEAR(−1), THRESHOLD(−m), LINEAR(−1) (coremltools' relu6 lowering).
    static func minSteps(_ m: Float) -> [CoreMLLayer] {
        [act(.linear(alpha: -1, beta: 0)), exactUnary(.threshold, alpha: -m), act(.linear(alpha: -1, beta: 0))]
    }

    /// `Op.unary`: Core ML `unary` where it has the function (sqrt, rsqrt, inverse, power, exp,
    /// log, abs, threshold — with scale, shift, alpha and epsilon), neg as LINEAR, square as
    /// POWER 2, exp2 as EXP with the scale and shift multiplied by ln 2; the other functions
    /// (sin, cos, tan, their inverse and hyperbolic forms, erf, floor, ceil, round, sign) only exist as rank-N layers (spec 4), which
    /// this writer does not emit: refused.
    mutating func lowerUnary(_ node: Node, _ a: UnaryAttributes, _ inBlob: String, _ out: String) {
        guard a.scale != 0 else {
            return fail(node, "unary with scale 0 (Core ML reads a scale of 0 as 1)", "Replace the node by a constant.")
        }
        let layer: CoreMLLayer
        switch a.function {
        case .sqrt: layer = Self.exactUnary(.sqrt, scale: a.scale, shift: a.shift)
        case .rsqrt where a.epsilon == 0:
            // RSQRT with the smallest epsilon gives 1/sqrt(1e-45) ≈ 2.7e22 at 0, not ∞: SQRT then
            // INVERSE (1/(0 + 1e-45) overflows to ∞ as it should; elsewhere the 1e-45 is lost).
            return chain([Self.exactUnary(.sqrt, scale: a.scale, shift: a.shift), Self.exactUnary(.inverse)],
                         name: node.name, input: inBlob, output: out)
        case .rsqrt: layer = Self.exactUnary(.rsqrt, epsilon: a.epsilon, scale: a.scale, shift: a.shift)
        case .inverse: layer = Self.exactUnary(.inverse, epsilon: a.epsilon, scale: a.scale, shift: a.shift)
        case .power: layer = Self.exactUnary(.power, alpha: a.alpha, scale: a.scale, shift: a.shift)
        case .square: layer = Self.exactUnary(.power, alpha: 2, scale: a.scale, shift: a.shift)
        case .exp: layer = Self.exactUnary(.exp, scale: a.scale, shift: a.shift)
        case .exp2:
            let ln2: Float = 0.6931471805599453
            layer = Self.exactUnary(.exp, scale: a.scale * ln2, shift: a.shift * ln2)
        case .log:
            // Core ML LOG has no epsilon: log(scale·x + shift + ε) folds ε into the shift.
            layer = Self.exactUnary(.log, scale: a.scale, shift: a.shift + a.epsilon)
            if a.epsilon != 0 { notes.append("node '\(node.name)': log epsilon \(a.epsilon) folded into the unary shift") }
        case .abs: layer = Self.exactUnary(.abs, scale: a.scale, shift: a.shift)
        case .threshold: layer = Self.exactUnary(.threshold, alpha: a.alpha, scale: a.scale, shift: a.shift)
        case .neg: layer = Self.act(.linear(alpha: -a.scale, beta: -a.shift))
        case .sin, .cos, .tan, .asin, .acos, .atan, .sinh, .cosh, .tanh, .asinh, .acosh, .atanh, .erf, .floor, .ceil, .round, .sign:
            return fail(node, "unary \(a.function.rawValue) exists in Core ML only as a rank-N layer (spec 4, NeuralNetwork v2), which the exporter does not write",
                        "Export to an ML Program (coremltools) or remove the node.")
        }
        emit(node.name, [inBlob], [out], layer)
    }

    /// `Op.clip`: THRESHOLD(alpha) then min(·, beta) as LINEAR(−1), THRESHOLD(−beta), LINEAR(−1);
    /// an infinite bound drops its part (the `clip` layer needs spec 4 and the ND layout).
    mutating func lowerClip(_ node: Node, alpha: Float, beta: Float, _ inBlob: String, _ out: String) {
        var steps: [CoreMLLayer] = []
        if alpha != -.infinity { steps.append(Self.exactUnary(.threshold, alpha: alpha)) }
        if beta != .infinity { steps += Self.minSteps(beta) }
        if steps.isEmpty { steps = [Self.act(.linear(alpha: 1, beta: 0))] }
        chain(steps, name: node.name, input: inBlob, output: out)
    }

    /// `Op.binary`: two inputs → add / multiply / max / min (as `elementwise`, same broadcasting
    /// limits), sub as add of LINEAR(−1), real_div as multiply by unary INVERSE; a scalar constant
    /// "y" → LINEAR / THRESHOLD / POWER. floor_div, mod, two-input pow and non-scalar constants
    /// have no classic layer: refused.
    mutating func lowerBinary(_ node: Node, _ f: BinaryFunction, _ ins: [TensorType], _ inBlobs: [String], _ output: TensorType, _ out: String) {
        if let y = node.weights["y"] {
            guard y.elementCount == 1 else {
                return fail(node, "binary \(f.rawValue) with a constant of shape \(formatShape(y.shape))",
                            "Only a single-value constant operand is written (LINEAR, THRESHOLD or POWER); feed the tensor as an input.")
            }
            let c = y.floats()[0]
            let steps: [CoreMLLayer]
            switch f {
            case .add: steps = [Self.act(.linear(alpha: 1, beta: c))]
            case .sub: steps = [Self.act(.linear(alpha: 1, beta: -c))]
            case .mul: steps = [Self.act(.linear(alpha: c, beta: 0))]
            case .realDiv: steps = [Self.act(.linear(alpha: 1 / c, beta: 0))]
            case .maximum: steps = [Self.exactUnary(.threshold, alpha: c)]
            case .minimum: steps = Self.minSteps(c)
            case .pow: steps = [Self.exactUnary(.power, alpha: c)]
            case .floorDiv, .mod:
                return fail(node, "binary \(f.rawValue) has no Core ML NeuralNetwork layer before spec 4", "Remove the node or export an ML Program.")
            }
            chain(steps, name: node.name, input: inBlobs[0], output: out)
            return
        }
        switch f {
        case .add: lowerElementwise(node, .add, ins, inBlobs, output, out)
        case .sub: lowerElementwise(node, .subtract, ins, inBlobs, output, out)
        case .mul: lowerElementwise(node, .multiply, ins, inBlobs, output, out)
        case .maximum: lowerElementwise(node, .maximum, ins, inBlobs, output, out)
        case .minimum: lowerElementwise(node, .minimum, ins, inBlobs, output, out)
        case .realDiv:
            guard ins.count == 2 else { return }
            let inv = tempBlob("\(inBlobs[1])__inverse__\(node.name)")
            emit(freshLayerName("\(node.name)__inverse__"), [inBlobs[1]], [inv], Self.exactUnary(.inverse))
            lowerElementwise(node, .multiply, ins, [inBlobs[0], inv], output, out)
            notes.append("node '\(node.name)': x/y written as x·(1/y) (unary INVERSE, multiply)")
        case .floorDiv, .mod, .pow:
            fail(node, "binary \(f.rawValue) of two tensors has no Core ML NeuralNetwork layer before spec 4",
                 "Remove the node or export an ML Program.")
        }
    }

    /// The activations added with issue 9, with spec-1 layers.
    mutating func lowerMathActivation(_ a: Activation, node: Node, input: String, output: String, layerName: String) {
        switch a {
        case .mish:
            // x·tanh(softplus(x)).
            let t = tempBlob("\(output)__softplus_tanh")
            chain([Self.act(.softplus), Self.act(.tanh)], name: layerName, input: input, output: t)
            emit(freshLayerName("\(layerName)__multiply"), [input, t], [output], .multiply(alpha: 0))
        case .hardSwish:
            // x·min(relu(x + 3), 6)/6: the min's last LINEAR(−1) and the 1/6 are one LINEAR(−1/6).
            let t = tempBlob("\(output)__relu6_6")
            chain([Self.act(.linear(alpha: 1, beta: 3)), Self.act(.relu), Self.act(.linear(alpha: -1, beta: 0)),
                   Self.exactUnary(.threshold, alpha: -6), Self.act(.linear(alpha: -1.0 / 6.0, beta: 0))],
                  name: layerName, input: input, output: t)
            emit(freshLayerName("\(layerName)__multiply"), [input, t], [output], .multiply(alpha: 0))
        case let .parametricSoftplus(alpha, beta):
            emit(layerName, [input], [output], Self.act(.parametricSoftplus(alpha: Spec.WeightParams([alpha]), beta: Spec.WeightParams([beta]))))
        case let .scaledTanh(alpha, beta):
            emit(layerName, [input], [output], Self.act(.scaledTanh(alpha: alpha, beta: beta)))
        case .geluSigmoid:
            let s = tempBlob("\(output)__sigmoid")
            chain([Self.act(.linear(alpha: 1.702, beta: 0)), Self.act(.sigmoid)], name: layerName, input: input, output: s)
            emit(freshLayerName("\(layerName)__multiply"), [input, s], [output], .multiply(alpha: 0))
        case .logSigmoid:
            chain([Self.act(.linear(alpha: -1, beta: 0)), Self.act(.softplus), Self.act(.linear(alpha: -1, beta: 0))],
                  name: layerName, input: input, output: output)
        default:
            lowerActivation(a, node: node, input: input, output: output, layerName: layerName)
        }
    }
}
