// Types and shape arithmetic shared by several op definitions.

/// Spatial padding of a window op (convolution, pooling).
public enum PaddingMode: Codable, Hashable, Sendable {
    /// No padding (Keras `padding='valid'`).
    case valid
    /// TensorFlow/Keras `padding='same'`: output = ceil(input/stride); total padding
    /// max((out−1)·stride + effectiveKernel − input, 0), the odd pixel going bottom/right
    /// (Core ML `SamePadding` BOTTOM_RIGHT_HEAVY).
    case same
    /// Explicit pixels: top, bottom, left, right.
    case explicit(top: Int, bottom: Int, left: Int, right: Int)

    /// Resolves to explicit (top, bottom, left, right) for an input of `inH`×`inW`.
    public func resolve(inH: Int, inW: Int, kernel: (Int, Int), stride: (Int, Int), dilation: (Int, Int))
        -> (top: Int, bottom: Int, left: Int, right: Int)
    {
        switch self {
        case .valid: return (0, 0, 0, 0)
        case let .explicit(t, b, l, r): return (t, b, l, r)
        case .same:
            func pads(_ n: Int, _ k: Int, _ s: Int, _ d: Int) -> (Int, Int) {
                let ek = (k - 1) * d + 1
                let out = (n + s - 1) / s
                let total = Swift.max((out - 1) * s + ek - n, 0)
                return (total / 2, total - total / 2)
            }
            let (t, b) = pads(inH, kernel.0, stride.0, dilation.0)
            let (l, r) = pads(inW, kernel.1, stride.1, dilation.1)
            return (t, b, l, r)
        }
    }
}

extension Node {
    /// Output height and width of a 2-D window op (convolution, pooling) with the given geometry.
    func windowOutput(_ h: Int, _ w: Int, _ k: [Int], _ s: [Int], _ d: [Int], _ p: PaddingMode) throws -> (Int, Int) {
        guard k.count == 2, s.count == 2, d.count == 2, k.allSatisfy({ $0 > 0 }), s.allSatisfy({ $0 > 0 }), d.allSatisfy({ $0 > 0 }) else {
            throw fail("kernel \(k), strides \(s), dilations \(d) must be two positive integers each")
        }
        let out: (Int, Int)
        switch p {
        case .same: out = ((h + s[0] - 1) / s[0], (w + s[1] - 1) / s[1])
        case .valid, .explicit:
            let pp = p.resolve(inH: h, inW: w, kernel: (k[0], k[1]), stride: (s[0], s[1]), dilation: (d[0], d[1]))
            let ekh = (k[0] - 1) * d[0] + 1, ekw = (k[1] - 1) * d[1] + 1
            out = ((h + pp.top + pp.bottom - ekh) / s[0] + 1, (w + pp.left + pp.right - ekw) / s[1] + 1)
        }
        guard out.0 > 0, out.1 > 0 else {
            throw fail("window \(k) stride \(s) on \(h)×\(w) with \(p) padding gives an empty output")
        }
        return out
    }
}

/// NumPy broadcasting of two shapes, or nil when they are incompatible.
public func broadcastShapes(_ a: [Int], _ b: [Int]) -> [Int]? {
    let r = max(a.count, b.count)
    let pa = Array(repeating: 1, count: r - a.count) + a, pb = Array(repeating: 1, count: r - b.count) + b
    var out: [Int] = []
    for (x, y) in zip(pa, pb) {
        if x == y || y == 1 { out.append(x) } else if x == 1 { out.append(y) } else { return nil }
    }
    return out
}

extension PaddingMode {
    /// Encoding: "valid", "same", or [top, bottom, left, right].
    var attributeValue: AttributeValue {
        switch self {
        case .valid: return .string("valid")
        case .same: return .string("same")
        case let .explicit(t, b, l, r): return .ints([t, b, l, r])
        }
    }

    init(attribute name: String, of a: AttributeReader) throws {
        switch a.values[name] {
        case .string("valid")?: self = .valid
        case .string("same")?: self = .same
        case .list?:
            let v = try a.ints(name)
            guard v.count == 4 else { throw a.mismatch(name, expected: "\"valid\", \"same\" or [top, bottom, left, right]", found: .ints(v)) }
            self = .explicit(top: v[0], bottom: v[1], left: v[2], right: v[3])
        case let v: throw a.mismatch(name, expected: "\"valid\", \"same\" or [top, bottom, left, right]", found: v)
        }
    }
}
