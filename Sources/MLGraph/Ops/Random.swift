// MARK: random ops — `Op.random`: seeded pseudo-random samples in the shape of the input.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The distribution `Op.random` samples (Core ML's `randomNormal*`, `randomUniform*`,
/// `randomBernoulli*` layers; MIL `random_normal`, `random_uniform`, `random_bernoulli`).
public enum RandomDistribution: Codable, Hashable, Sendable {
    /// mean + stdDev·z, z standard normal (Box–Muller); stdDev ≥ 0.
    case normal(mean: Float, stdDev: Float)
    /// low + (high − low)·u, u uniform in the open interval (0, 1); low ≤ high.
    case uniform(low: Float, high: Float)
    /// 1 with probability `probability` (u < probability), else 0; 0 ≤ probability ≤ 1.
    case bernoulli(probability: Float)
}

/// Attributes of `Op.random`.
///
/// **Generator** (mlconv's own; Core ML does not specify one, so samples differ from Apple's
/// for the same seed): element i of the output (row-major) uses the uniform draws
/// u(2i) and, for `normal`, u(2i + 1), where
///
///     u(k) = (⌊splitmix64(seed + (k + 1)·0x9E3779B97F4A7C15) / 2⁴⁰⌋ + 0.5) / 2²⁴   ∈ (0, 1)
///
/// (`seed` as a two's-complement UInt64, wrapping arithmetic; splitmix64's finaliser
/// z ← (z ⊕ z≫30)·0xBF58476D1CE4E5B9, z ← (z ⊕ z≫27)·0x94D049BB133111EB, z ⊕ z≫31), and the
/// normal sample is √(−2 ln u(2i))·cos(2π·u(2i+1)) in double precision. The op is a pure
/// function of seed and shape: every prediction draws the same numbers.
public struct RandomAttributes: Codable, Hashable, Sendable {
    public var distribution: RandomDistribution
    public var seed: Int64
    public init(_ distribution: RandomDistribution, seed: Int64) { self.distribution = distribution; self.seed = seed }

    /// u(k) of the generator (see the type's documentation).
    @inlinable
    public func uniform(_ k: Int) -> Double {
        var z = UInt64(bitPattern: seed) &+ (UInt64(truncatingIfNeeded: k) &+ 1) &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return (Double(z >> 40) + 0.5) / 16_777_216
    }

    /// Output element `i`.
    @inlinable
    public func sample(_ i: Int) -> Float {
        switch distribution {
        case let .normal(mean, stdDev):
            let u1 = uniform(2 * i), u2 = uniform(2 * i + 1)
            let z = (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
            return Float(Double(mean) + Double(stdDev) * z)
        case let .uniform(low, high):
            return Float(Double(low) + (Double(high) - Double(low)) * uniform(2 * i))
        case let .bernoulli(p):
            return uniform(2 * i) < Double(p) ? 1 : 0
        }
    }

}

/// Definition of `Op.random`: x (any element type; only its shape is read) → float32 samples of
/// x's shape. Core ML `randomNormalLike`, `randomUniformLike`, `randomBernoulliLike` (the
/// Static / Dynamic layers are a `fill` of the shape followed by this op); MIL
/// `random_normal`, `random_uniform`, `random_bernoulli` (shape = the input's shape).
enum RandomDefinition: OpDefinition {
    static let kind = OpKind.random
    static let summary = "seeded pseudo-random samples (normal, uniform, Bernoulli) in the shape of the input"
    static let milOps = ["random_normal", "random_uniform", "random_bernoulli"]
    static let neuralNetworkExportRefusal: NeuralNetworkExportRefusal? = NeuralNetworkExportRefusal(
        reason: "Core ML's random layers (randomNormal / randomUniform / randomBernoulli, spec 4) draw from Core ML's own generator, so the seeded samples of this op cannot be reproduced",
        suggestion: "Keep the op out of graphs exported to .mlmodel (run them with mlconv), or export an ML Program with coremltools.")

    static var functions: [OpFunctionExample] {
        [OpFunctionExample("normal", .random(RandomAttributes(.normal(mean: 0, stdDev: 1), seed: 1)), inputs: [TensorType([2, 3])]),
         OpFunctionExample("uniform", .random(RandomAttributes(.uniform(low: 0, high: 1), seed: 1)), inputs: [TensorType([2, 3])]),
         OpFunctionExample("bernoulli", .random(RandomAttributes(.bernoulli(probability: 0.5), seed: 1)), inputs: [TensorType([2, 3])])]
    }

    static func checkAttributes(of node: Node) throws {
        guard case let .random(a) = node.op else { return }
        switch a.distribution {
        case let .normal(mean, stdDev):
            try node.checkFinite(mean, "mean"); try node.checkFinite(stdDev, "stdDev")
            guard stdDev >= 0 else { throw node.fail("stdDev must be ≥ 0, found \(stdDev)") }
        case let .uniform(low, high):
            try node.checkFinite(low, "low"); try node.checkFinite(high, "high")
            guard low <= high else { throw node.fail("low \(low) must not exceed high \(high)") }
        case let .bernoulli(p):
            guard p >= 0, p <= 1 else { throw node.fail("probability must be in [0, 1], found \(p)") }
        }
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        try node.expectInputs(ins, 1)
        return [TensorType(ins[0].shape, .float32)]
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .random(a) = op else { return [:] }
        var out: [String: AttributeValue] = ["seed": .int(Int(a.seed))]
        switch a.distribution {
        case let .normal(mean, stdDev):
            out["distribution"] = .string("normal"); out["mean"] = .canonicalNumber(mean); out["stdDev"] = .canonicalNumber(stdDev)
        case let .uniform(low, high):
            out["distribution"] = .string("uniform"); out["low"] = .canonicalNumber(low); out["high"] = .canonicalNumber(high)
        case let .bernoulli(p):
            out["distribution"] = .string("bernoulli"); out["probability"] = .canonicalNumber(p)
        }
        return out
    }

    static func decodeOp(from r: AttributeReader) throws -> Op {
        let seed = Int64(try r.int("seed"))
        let d: RandomDistribution
        switch try r.string("distribution") {
        case "normal": d = .normal(mean: try r.float("mean"), stdDev: try r.float("stdDev"))
        case "uniform": d = .uniform(low: try r.float("low"), high: try r.float("high"))
        case "bernoulli": d = .bernoulli(probability: try r.float("probability"))
        default: throw r.mismatch("distribution", expected: "normal, uniform or bernoulli", found: try r.value("distribution"))
        }
        return .random(RandomAttributes(d, seed: seed))
    }
}
