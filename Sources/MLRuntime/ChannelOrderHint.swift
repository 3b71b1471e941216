import MLGraph

// MARK: channel-order hint of shapeNotAllowed
// A Keras model exported to .mlmodel takes Core ML's channel-first order ([1, C, H, W]); a caller
// with the Keras (NHWC) array gets `shapeNotAllowed`. When moving the array's last axis to the
// channel position (1, or 0 without the batch) gives a shape the input accepts, the message says so.

extension RuntimeError {
    /// The channel-first shape an array of shape `found` would have after moving its last axis
    /// to the channel position, when the input (default shape `defaultShape`, flexibility
    /// `allowed`) accepts that shape and not `found`; nil otherwise. `found` may omit the
    /// leading batch 1 (then the transposed shape omits it too).
    static func channelFirstShape(found: [Int], defaultShape: [Int], allowed: ShapeFlexibility) -> [Int]? {
        guard found.count >= 3, let last = found.last else { return nil }
        let candidate: [Int], withBatch: [Int]
        if found.count == defaultShape.count {
            candidate = [found[0], last] + found[1..<(found.count - 1)]
            withBatch = candidate
        } else if found.count == defaultShape.count - 1, defaultShape.first == 1 {
            candidate = [last] + found[0..<(found.count - 1)]
            withBatch = [1] + candidate
        } else {
            return nil
        }
        guard candidate != found, withBatch == defaultShape || allowed.allows(withBatch) else { return nil }
        return candidate
    }

    /// "; the .mlmodel takes Core ML's channel-first order; …" or "" (see `channelFirstShape`).
    static func channelOrderHint(found: [Int], defaultShape: [Int], allowed: ShapeFlexibility) -> String {
        guard let t = channelFirstShape(found: found, defaultShape: defaultShape, allowed: allowed) else { return "" }
        return "; the .mlmodel takes Core ML's channel-first order; this array looks channel-last — transpose it to \(formatShape(t))"
    }
}
