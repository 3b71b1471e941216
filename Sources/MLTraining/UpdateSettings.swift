// The hyper-parameters of one update, and the overrides a caller may give (MLUpdateTask's
// MLModelConfiguration.parameters), checked against what the model allows.
import CoreMLFormat

/// What one update runs with.
public struct UpdateSettings: Equatable, Sendable {
    public var optimizer: OptimizerSettings
    /// Examples per gradient step (the last mini-batch of an epoch may be smaller).
    public var miniBatchSize: Int
    public var epochs: Int
    /// Reorder the examples before every epoch (`EpochOrder`, seeded `SplitMix64`).
    public var shuffle: Bool
    public var seed: Int64

    public init(optimizer: OptimizerSettings, miniBatchSize: Int, epochs: Int, shuffle: Bool = false, seed: Int64 = 0) {
        self.optimizer = optimizer
        self.miniBatchSize = miniBatchSize
        self.epochs = epochs
        self.shuffle = shuffle
        self.seed = seed
    }
}

/// Overrides of the model's update parameters (Core ML's `MLParameterKey`s): nil keeps the
/// model's default. Each value must lie in the parameter's allowed range or set when the model
/// declares one (`Int64Parameter` / `DoubleParameter` `AllowedValues`).
public struct UpdateParameterOverrides: Equatable, Sendable {
    public var learningRate: Double?
    public var miniBatchSize: Int?
    public var epochs: Int?
    public var momentum: Double?
    public var beta1: Double?
    public var beta2: Double?
    public var eps: Double?
    public var shuffle: Bool?
    public var seed: Int64?
    public init(learningRate: Double? = nil, miniBatchSize: Int? = nil, epochs: Int? = nil, momentum: Double? = nil,
                beta1: Double? = nil, beta2: Double? = nil, eps: Double? = nil, shuffle: Bool? = nil, seed: Int64? = nil) {
        self.learningRate = learningRate; self.miniBatchSize = miniBatchSize; self.epochs = epochs
        self.momentum = momentum; self.beta1 = beta1; self.beta2 = beta2; self.eps = eps
        self.shuffle = shuffle; self.seed = seed
    }
}

/// Parameter checks shared by the description validator and overrides.
enum ParameterCheck {
    /// The value of a DoubleParameter (default or override), checked against its range.
    static func double(_ p: Spec.DoubleParameter, override: Double?, name: String, model: String) throws -> Double {
        let v = override ?? p.defaultValue
        guard v.isFinite else { throw TrainingError.invalidParameter(model: model, parameter: name, reason: "\(v) is not finite") }
        if case let .range(r)? = p.allowedValues, !(r.minValue...r.maxValue).contains(v) {
            if override == nil, r.minValue > r.maxValue {
                throw TrainingError.invalidParameter(model: model, parameter: name,
                    reason: "the model's allowed range [\(r.minValue), \(r.maxValue)] is empty")
            }
            throw TrainingError.invalidParameter(model: model, parameter: name,
                reason: "\(v) is outside the allowed range [\(r.minValue), \(r.maxValue)]")
        }
        return v
    }

    /// The value of an Int64Parameter, checked against its range or set (and > 0 when `positive`).
    static func int(_ p: Spec.Int64Parameter, override: Int64?, name: String, positive: Bool, model: String) throws -> Int64 {
        let v = override ?? p.defaultValue
        if positive, v <= 0 {
            throw TrainingError.invalidParameter(model: model, parameter: name, reason: "must be positive, found \(v)")
        }
        switch p.allowedValues {
        case let .range(r)? where !(r.minValue <= v && v <= r.maxValue):
            throw TrainingError.invalidParameter(model: model, parameter: name,
                reason: "\(v) is outside the allowed range [\(r.minValue), \(r.maxValue)]")
        case let .set(s)? where !s.values.contains(v):
            throw TrainingError.invalidParameter(model: model, parameter: name,
                reason: "\(v) is not one of the allowed values \(s.values)")
        default: return v
        }
    }
}
