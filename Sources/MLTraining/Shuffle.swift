// The seeded generator that orders the examples of each epoch.

/// SplitMix64 (Steele, Lea & Flood 2014): a 64-bit state advanced by 0x9E3779B97F4A7C15 and
/// finalised by two xor-shift-multiply rounds. Deterministic across platforms, so an update with
/// the same seed and data gives the same weights everywhere. (Core ML does not document its own
/// generator, so shuffled updates match Core ML's in distribution, not in order.)
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform integer in 0..<n (n > 0) by Lemire's multiply-and-reject (no modulo bias).
    public mutating func uniform(below n: Int) -> Int {
        let bound = UInt64(n)
        while true {
            let r = next()
            let (hi, lo) = r.multipliedFullWidth(by: bound)
            if lo >= (0 &- bound) % bound { return Int(hi) }
        }
    }
}

/// The example order of each epoch: file order when shuffling is off; otherwise a Fisher–Yates
/// shuffle (i from n−1 down to 1 swaps with a uniform j ≤ i) of the previous epoch's order, drawn
/// from one `SplitMix64` seeded with the update's seed for the whole update.
struct EpochOrder {
    private var generator: SplitMix64?
    private var order: [Int]

    init(count: Int, shuffle: Bool, seed: Int64) {
        order = Array(0..<count)
        generator = shuffle ? SplitMix64(seed: UInt64(bitPattern: seed)) : nil
    }

    mutating func next() -> [Int] {
        guard var g = generator else { return order }
        if order.count > 1 {
            for i in stride(from: order.count - 1, to: 0, by: -1) {
                order.swapAt(i, g.uniform(below: i + 1))
            }
        }
        generator = g
        return order
    }
}
