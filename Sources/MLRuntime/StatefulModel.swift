// Models with states (Core ML iOS 18 stateful ML programs, imported by CoreMLFormat's
// MILImporter): the graph takes each state's current value as an input and gives its next value
// as an output; this wrapper keeps the values between predictions.
import Foundation
import MLGraph

/// A `Model` whose states persist across predictions of this instance, as Core ML's `MLState`
/// does for one `makeState()`; `resetStates()` zeroes them (a new state). Thread-safe:
/// predictions are serialised, since each one reads and writes the states.
public final class StatefulModel: @unchecked Sendable {
    public let model: Model
    /// (state input, next-value output) pairs.
    public let states: [(input: String, output: String)]
    private var values: [String: NDArray] = [:]
    private let lock = NSLock()

    /// - Parameters:
    ///   - graph: a graph whose states `states` names (input → output), e.g. `MILStates.states(of:)`.
    /// - Throws: `RuntimeError` from `Model.init`; `RuntimeError.missingInput` when a state pair
    ///   names an input or output the graph does not have.
    public init(graph: Graph, states: [(input: String, output: String)], configuration: Model.Configuration = Model.Configuration()) throws {
        for s in states {
            guard graph.inputs.contains(where: { $0.name == s.input }), graph.outputs.contains(s.output) else {
                throw RuntimeError.missingInput(name: s.input, expected: graph.inputs.map(\.name) + ["(state output) " + s.output])
            }
        }
        model = try Model(graph: graph, configuration: configuration)
        self.states = states
        resetStates()
    }

    /// Sets every state to zeros (Core ML's initial state).
    public func resetStates() {
        lock.lock(); defer { lock.unlock() }
        values = [:]
        for s in states {
            let t = model.graph.inputs.first { $0.name == s.input }?.type
            values[s.input] = NDArray(shape: t?.shape ?? [], repeating: 0)
        }
    }

    /// The current value of each state, by input name.
    public var stateValues: [String: NDArray] {
        lock.lock(); defer { lock.unlock() }
        return values
    }

    /// Runs one prediction with the current states and keeps their next values. The outputs
    /// exclude the state outputs.
    public func prediction(from inputs: [String: NDArray]) throws -> [String: NDArray] {
        lock.lock(); defer { lock.unlock() }
        var all = inputs
        for (k, v) in values { all[k] = v }
        var out = try model.prediction(from: all)
        for s in states {
            if let v = out.removeValue(forKey: s.output) { values[s.input] = v }
        }
        return out
    }
}
