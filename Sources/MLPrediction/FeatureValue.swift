// Core ML feature values: the typed values a Core ML model takes and returns (the shape of
// Core ML's `MLFeatureValue` / `MLFeatureProvider`). Neural networks keep their fast tensor path
// (`MLRuntime.Model.prediction(from: [String: NDArray])`); this module is the general path every
// Core ML model type runs through (classical models, pipelines, and neural networks as stages).
import CoreMLFormat
import Foundation

/// One Core ML feature value (`FeatureTypes.proto`: `FeatureType.Type`).
public enum FeatureValue: Equatable, Sendable {
    /// `Int64FeatureType`.
    case int64(Int64)
    /// `DoubleFeatureType`.
    case double(Double)
    /// `StringFeatureType`.
    case string(String)
    /// `ArrayFeatureType` (MLMultiArray): row-major values with a shape and a data type.
    case multiArray(MultiArray)
    /// `DictionaryFeatureType`: string or int64 keys → double (Core ML's classifier
    /// probabilities, `DictVectorizer` inputs).
    case dictionary(FeatureDictionary)
    /// `SequenceFeatureType`: a sequence of int64 or of strings.
    case sequence(FeatureSequence)
    /// `ImageFeatureType`: interleaved 8-bit pixels (see `FeatureImage`).
    case image(FeatureImage)

    /// The Core ML name of the value's type, for messages (`"Int64"`, `"Double"`, `"String"`,
    /// `"MultiArray"`, `"Dictionary"`, `"Sequence"`, `"Image"`).
    public var typeName: String {
        switch self {
        case .int64: return "Int64"
        case .double: return "Double"
        case .string: return "String"
        case .multiArray: return "MultiArray"
        case .dictionary: return "Dictionary"
        case .sequence: return "Sequence"
        case .image: return "Image"
        }
    }
}

/// A multi-dimensional array (Core ML's `MLMultiArray`). Values are stored as Double, which
/// represents every float16, float32, int32 and float64 value exactly; `dataType` says which type
/// the model declared (and which the runtime rounds to when it hands the array on).
public struct MultiArray: Equatable, Sendable {
    /// Core ML's `ArrayFeatureType.ArrayDataType`.
    public enum DataType: String, Equatable, Sendable, CaseIterable {
        case float16, float32, float64, int32
    }
    /// Row-major shape; every dimension ≥ 0. A rank-1 array of n values has shape `[n]`.
    public var shape: [Int]
    public var dataType: DataType
    /// Row-major values, `shape.reduce(1, *)` of them.
    public var values: [Double]

    /// - Throws: `FeatureError.shapeMismatch` when the count does not match the shape.
    public init(shape: [Int], dataType: DataType = .float64, values: [Double]) throws {
        var count = 1
        for d in shape {
            let (p, o) = count.multipliedReportingOverflow(by: d)
            guard d >= 0, !o else { throw FeatureError.invalidShape(shape: shape) }
            count = p
        }
        guard count == values.count else {
            throw FeatureError.shapeMismatch(feature: nil, expected: shape, found: values.count)
        }
        self.shape = shape
        self.dataType = dataType
        self.values = values.map { Self.round($0, to: dataType) }
    }

    /// A rank-1 array.
    public init(vector: [Double], dataType: DataType = .float64) {
        self.shape = [vector.count]
        self.dataType = dataType
        self.values = vector.map { Self.round($0, to: dataType) }
    }

    /// Rounds a value to what the data type can hold (float16/float32 nearest, int32 toward zero
    /// with saturation, as Core ML's MLMultiArray conversion).
    public static func round(_ v: Double, to t: DataType) -> Double {
        switch t {
        case .float64: return v
        case .float32: return Double(Float(v))
        case .float16: return Double(Float16(Float(v)))
        case .int32:
            if v.isNaN { return 0 }
            return Double(Int32(clamping: Int64(max(min(v.rounded(.towardZero), 2147483647), -2147483648))))
        }
    }

    public var count: Int { values.count }
}

/// A dictionary feature value (Core ML's `[String: NSNumber]` / `[Int64: NSNumber]`).
public enum FeatureDictionary: Equatable, Sendable {
    case stringKeys([String: Double])
    case int64Keys([Int64: Double])

    public var count: Int {
        switch self {
        case let .stringKeys(d): return d.count
        case let .int64Keys(d): return d.count
        }
    }
}

/// A sequence feature value.
public enum FeatureSequence: Equatable, Sendable {
    case int64([Int64])
    case string([String])

    public var count: Int {
        switch self {
        case let .int64(s): return s.count
        case let .string(s): return s.count
        }
    }
}

/// An image feature value: `height × width × channels` interleaved 8-bit pixels, row-major,
/// channels in the order `colorSpace` names (RGB, BGR, or 1 grayscale channel).
public struct FeatureImage: Equatable, Sendable {
    public enum ColorSpace: String, Equatable, Sendable { case rgb, bgr, grayscale }
    public var width: Int
    public var height: Int
    public var colorSpace: ColorSpace
    /// `height * width * channels` bytes.
    public var pixels: [UInt8]
    public var channels: Int { colorSpace == .grayscale ? 1 : 3 }

    /// - Throws: `FeatureError.shapeMismatch` when `pixels` has the wrong size.
    public init(width: Int, height: Int, colorSpace: ColorSpace, pixels: [UInt8]) throws {
        let c = colorSpace == .grayscale ? 1 : 3
        let (wh, o1) = width.multipliedReportingOverflow(by: height)
        let (n, o2) = wh.multipliedReportingOverflow(by: c)
        guard width >= 0, height >= 0, !o1, !o2, n == pixels.count else {
            throw FeatureError.shapeMismatch(feature: nil, expected: [height, width, c], found: pixels.count)
        }
        self.width = width
        self.height = height
        self.colorSpace = colorSpace
        self.pixels = pixels
    }
}

/// Named feature values, as Core ML's `MLFeatureProvider` / `MLDictionaryFeatureProvider`.
public typealias FeatureProvider = [String: FeatureValue]
