import Foundation
import MLConv

// Run from the repository: swift run mlconv-example
let model = try MLModel(contentsOf: URL(fileURLWithPath: "Fixtures/demo/digits_cnn.h5"))  // Keras → cached .mlbundle
let digit = try MultiArray(contentsOfNPY: URL(fileURLWithPath: "Fixtures/demo/digit_7.npy"))  // [1, 8, 8, 1]
let output = try model.prediction(from: ["digit": .multiArray(digit)])
if case let .multiArray(p)? = output["probabilities"], let best = p.values.indices.max(by: { p.values[$0] < p.values[$1] }) {
    print("digit \(best), probability \(p.values[best])")
}
