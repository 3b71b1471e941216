// The protocol every runnable Core ML model adopts (classical models, pipelines, neural networks).
import CoreMLFormat
import Foundation

/// A loaded Core ML model that predicts named feature values (Core ML's `MLModel`).
///
/// Implementations are immutable after loading and thread-safe (`Sendable`).
public protocol FeatureModel: Sendable {
    /// Inputs, outputs and classifier names as the model's `ModelDescription` declares them.
    var modelDescription: Spec.ModelDescription { get }
    /// Predicts one row. `inputs` holds (at least) every non-optional input of the description;
    /// returns every output of the description.
    /// - Throws: `FeatureError` (missing inputs, type mismatches, invalid model parameters).
    func prediction(from inputs: FeatureProvider) throws -> FeatureProvider
    /// Predicts many rows (Core ML's batch API); outputs are in input order. Models that can
    /// evaluate a whole batch at once (trees, GLMs) override the default, which loops.
    func predictions(from batch: [FeatureProvider]) throws -> [FeatureProvider]
}

extension FeatureModel {
    public func predictions(from batch: [FeatureProvider]) throws -> [FeatureProvider] {
        try batch.map { try prediction(from: $0) }
    }
}
