// Conversions between the C ABI's feature structs / result buffers / JSON and MLConv's feature
// values and model description.
import CMLConv
import Foundation
import MLConv

let kindMultiArray = Int32(MLCONV_KIND_MULTIARRAY.rawValue), kindInt64 = Int32(MLCONV_KIND_INT64.rawValue)
let kindDouble = Int32(MLCONV_KIND_DOUBLE.rawValue), kindString = Int32(MLCONV_KIND_STRING.rawValue)
let kindDictionary = Int32(MLCONV_KIND_DICTIONARY.rawValue), kindSequence = Int32(MLCONV_KIND_SEQUENCE.rawValue)
let kindImage = Int32(MLCONV_KIND_IMAGE.rawValue)
let dtFloat32 = Int32(MLCONV_DTYPE_FLOAT32.rawValue), dtFloat64 = Int32(MLCONV_DTYPE_FLOAT64.rawValue)
let dtFloat16 = Int32(MLCONV_DTYPE_FLOAT16.rawValue), dtInt32 = Int32(MLCONV_DTYPE_INT32.rawValue)
let dtInt64 = Int32(MLCONV_DTYPE_INT64.rawValue), dtUInt8 = Int32(MLCONV_DTYPE_UINT8.rawValue)

/// Most dimensions of a C multi-array.
let maximumRank = 32

func invalid(_ feature: String, _ message: String) -> CABIError {
    CABIError(MLCONV_ERROR_FEATURE, "feature '\(feature)': \(message)")
}

/// The feature values of `count` C features.
func provider(_ inputs: UnsafePointer<mlconv_feature>?, count: Int, model: MLModel) throws -> FeatureProvider {
    guard count >= 0 else { throw CABIError(MLCONV_ERROR_INVALID_ARGUMENT, "the feature count is negative") }
    if count == 0 { return [:] }
    guard let inputs else { throw CABIError(MLCONV_ERROR_INVALID_ARGUMENT, "inputs is NULL with \(count) features") }
    var row: FeatureProvider = [:]
    for i in 0..<count {
        let f = inputs[i]
        guard let namePtr = f.name else { throw CABIError(MLCONV_ERROR_INVALID_ARGUMENT, "inputs[\(i)].name is NULL") }
        let name = String(cString: namePtr)
        guard row[name] == nil else { throw invalid(name, "given twice; give each input once") }
        row[name] = try value(f, name: name, model: model)
    }
    return row
}

func shape(_ f: mlconv_feature, name: String) throws -> (shape: [Int], count: Int) {
    guard f.rank >= 0, Int(f.rank) <= maximumRank else { throw invalid(name, "rank \(f.rank) is outside 0...\(maximumRank)") }
    if f.rank > 0 && f.shape == nil { throw invalid(name, "shape is NULL with rank \(f.rank)") }
    var dims: [Int] = []
    var count = 1
    for d in 0..<Int(f.rank) {
        guard let v = f.shape?[d], v >= 0, let n = Int(exactly: v) else {
            throw invalid(name, "dimension \(d) is \(f.shape?[d] ?? -1); dimensions are ≥ 0")
        }
        let (p, o) = count.multipliedReportingOverflow(by: n)
        guard !o, p <= Int(Int32.max) * 64 else { throw invalid(name, "the shape \(dims + [n]) holds too many elements") }
        count = p
        dims.append(n)
    }
    return (dims, count)
}

func string(_ p: UnsafePointer<CChar>?, name: String, what: String) throws -> String {
    guard let p else { throw invalid(name, "\(what) is NULL") }
    return String(cString: p)
}

func value(_ f: mlconv_feature, name: String, model: MLModel) throws -> FeatureValue {
    let described = model.modelDescription.inputDescriptionsByName[name]
    switch f.kind {
    case kindInt64: return .int64(f.int64_value)
    case kindDouble: return .double(f.double_value)
    case kindString: return .string(try string(f.string_value, name: name, what: "string_value"))
    case kindMultiArray:
        let (dims, count) = try shape(f, name: name)
        if count > 0 && f.data == nil { throw invalid(name, "data is NULL for \(count) elements") }
        let values: [Double]
        switch f.dtype {
        case dtFloat32: values = (0..<count).map { Double(f.data!.assumingMemoryBound(to: Float.self)[$0]) }
        case dtFloat64: values = (0..<count).map { f.data!.assumingMemoryBound(to: Double.self)[$0] }
        case dtFloat16: values = (0..<count).map { Double(Float(Float16(bitPattern: f.data!.assumingMemoryBound(to: UInt16.self)[$0]))) }
        case dtInt32: values = (0..<count).map { Double(f.data!.assumingMemoryBound(to: Int32.self)[$0]) }
        case dtInt64: values = (0..<count).map { Double(f.data!.assumingMemoryBound(to: Int64.self)[$0]) }
        case dtUInt8: values = (0..<count).map { Double(f.data!.assumingMemoryBound(to: UInt8.self)[$0]) }
        default: throw invalid(name, "dtype \(f.dtype) is not an mlconv_dtype (1...6)")
        }
        let dt = described?.multiArrayConstraint?.dataType ?? .float32
        return .multiArray(try MultiArray(shape: dims, dataType: dt, values: values))
    case kindDictionary:
        let text = try string(f.string_value, name: name, what: "string_value (a JSON object)")
        guard let obj = try? JSONSerialization.jsonObject(with: Data(text.utf8)), let dict = obj as? [String: Any] else {
            throw invalid(name, "string_value is not a JSON object: \(text.prefix(200))")
        }
        var numbers: [String: Double] = [:]
        for (k, v) in dict {
            guard let n = v as? NSNumber, !(v is Bool) else { throw invalid(name, "the value of key \"\(k)\" is not a number") }
            numbers[k] = n.doubleValue
        }
        if described?.dictionaryKeyType == .int64 {
            var ints: [Int64: Double] = [:]
            for (k, v) in numbers {
                guard let i = Int64(k) else { throw invalid(name, "key \"\(k)\" is not an integer; the model's dictionary has Int64 keys") }
                ints[i] = v
            }
            return .dictionary(.int64Keys(ints))
        }
        return .dictionary(.stringKeys(numbers))
    case kindSequence:
        let text = try string(f.string_value, name: name, what: "string_value (a JSON array)")
        guard let obj = try? JSONSerialization.jsonObject(with: Data(text.utf8)), let array = obj as? [Any] else {
            throw invalid(name, "string_value is not a JSON array: \(text.prefix(200))")
        }
        if let strings = array as? [String] { return .sequence(.string(strings)) }
        var ints: [Int64] = []
        for v in array {
            guard let n = v as? NSNumber, !(v is Bool), let i = Int64(exactly: n.doubleValue) else {
                throw invalid(name, "a sequence holds integers or strings, found \(v)")
            }
            ints.append(i)
        }
        return .sequence(.int64(ints))
    case kindImage:
        var crop: ImageCropAndScale? = nil
        var colorSpace: FeatureImage.ColorSpace? = nil
        if let o = f.options_json {
            let text = String(cString: o)
            guard let obj = try? JSONSerialization.jsonObject(with: Data(text.utf8)), let dict = obj as? [String: Any] else {
                throw invalid(name, "options_json is not a JSON object: \(text.prefix(200))")
            }
            for (k, v) in dict {
                switch (k, v as? String) {
                case ("crop", "center"?): crop = .centerCrop
                case ("crop", "fit"?): crop = .scaleFit
                case ("crop", "fill"?): crop = .scaleFill
                case ("color_space", "RGB"?): colorSpace = .rgb
                case ("color_space", "BGR"?): colorSpace = .bgr
                case ("color_space", "Grayscale"?): colorSpace = .grayscale
                default:
                    throw invalid(name, "options_json: \"\(k)\": \(v) is not an image option; give \"crop\": \"center\"|\"fit\"|\"fill\", \"color_space\": \"RGB\"|\"BGR\"|\"Grayscale\"")
                }
            }
        }
        if f.data == nil {
            let path = try string(f.string_value, name: name, what: "string_value (the image file) with data NULL")
            return try model.imageFeature(contentsOf: URL(fileURLWithPath: path), for: name, cropAndScale: crop)
        }
        guard f.dtype == dtUInt8 else { throw invalid(name, "raw image pixels have dtype MLCONV_DTYPE_UINT8, found \(f.dtype)") }
        let (dims, count) = try shape(f, name: name)
        guard dims.count == 3, dims[2] == 1 || dims[2] == 3 else {
            throw invalid(name, "raw image pixels have shape [height, width, channels] with 1 or 3 channels, found \(dims)")
        }
        let pixels = Array(UnsafeBufferPointer(start: f.data!.assumingMemoryBound(to: UInt8.self), count: count))
        let cs = colorSpace ?? (dims[2] == 1 ? .grayscale : .rgb)
        guard (cs == .grayscale) == (dims[2] == 1) else {
            throw invalid(name, "color_space \(cs.rawValue) does not match \(dims[2]) channels")
        }
        return try model.imageFeature(pixels: pixels, width: dims[1], height: dims[0], colorSpace: cs, for: name, cropAndScale: crop)
    default:
        throw invalid(name, "kind \(f.kind) is not an mlconv_feature_kind (1...7)")
    }
}

// MARK: - Results

func cResult(_ row: FeatureProvider, model: MLModel) throws -> CResult {
    let r = CResult()
    var names = model.modelDescription.outputs.map(\.name).filter { row[$0] != nil }
    names += row.keys.filter { !names.contains($0) }.sorted()
    for name in names {
        guard let v = row[name] else { continue }
        var e = CResult.Entry(name: try cString(name), kind: 0)
        // An entry not yet in `r` is freed here when a buffer cannot be allocated.
        do {
            switch v {
            case let .int64(i): e.kind = kindInt64; e.int64 = i
            case let .double(d): e.kind = kindDouble; e.double = d
            case let .string(s): e.kind = kindString; e.string = try cString(s)
            case let .dictionary(d):
                e.kind = kindDictionary
                let obj: [String: Double]
                switch d {
                case let .stringKeys(m): obj = m
                case let .int64Keys(m): obj = Dictionary(uniqueKeysWithValues: m.map { (String($0.key), $0.value) })
                }
                e.string = try cString(json(obj))
            case let .sequence(s):
                e.kind = kindSequence
                switch s {
                case let .int64(v): e.string = try cString(json(v))
                case let .string(v): e.string = try cString(json(v))
                }
            case let .multiArray(a):
                e.kind = kindMultiArray
                e.rank = Int32(a.shape.count)
                e.shape = try buffer(a.shape.map { Int64($0) })
                switch a.dataType {
                case .float32: e.dtype = dtFloat32; e.data = UnsafeMutableRawPointer(try buffer(a.values.map { Float($0) }))
                case .float64: e.dtype = dtFloat64; e.data = UnsafeMutableRawPointer(try buffer(a.values))
                case .float16: e.dtype = dtFloat16; e.data = UnsafeMutableRawPointer(try buffer(a.values.map { Float16(Float($0)).bitPattern }))
                case .int32: e.dtype = dtInt32; e.data = UnsafeMutableRawPointer(try buffer(a.values.map { Int32(clamping: Int64(exactly: $0.rounded(.towardZero)) ?? 0) }))
                }
            case let .image(img):
                e.kind = kindImage
                e.dtype = dtUInt8
                e.rank = 3
                e.shape = try buffer([Int64(img.height), Int64(img.width), Int64(img.channels)])
                e.data = UnsafeMutableRawPointer(try buffer(img.pixels))
                e.string = try cString(img.colorSpace == .bgr ? "BGR" : img.colorSpace == .rgb ? "RGB" : "Grayscale")
            }
        } catch {
            free(e.name); free(e.shape); free(e.data); free(e.string)
            throw error
        }
        r.entries.append(e)
    }
    return r
}

/// A malloc'd copy of `values` (one byte for an empty array, so the pointer is never NULL).
/// - Throws: `CABIError` (MLCONV_ERROR_PREDICTION) when the memory cannot be allocated.
func buffer<T>(_ values: [T]) throws -> UnsafeMutablePointer<T> {
    let (product, overflow) = values.count.multipliedReportingOverflow(by: MemoryLayout<T>.stride)
    guard !overflow, let raw = malloc(max(1, product)) else {
        throw CABIError(MLCONV_ERROR_PREDICTION, "cannot allocate \(values.count) × \(MemoryLayout<T>.stride) bytes for a result")
    }
    let p = raw.bindMemory(to: T.self, capacity: max(values.count, 1))
    values.withUnsafeBufferPointer { src in
        if let base = src.baseAddress { p.initialize(from: base, count: values.count) }
    }
    return p
}

func json(_ value: Any) -> String {
    guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]) else { return "null" }
    return String(decoding: data, as: UTF8.self)
}

// MARK: - Description

func describeJSON(_ d: MLModelDescription) -> [String: Any] {
    func range(_ r: MLMultiArrayConstraint.SizeRange) -> [Int] { [r.lowerBound, r.upperBound ?? -1] }
    func feature(_ f: MLFeatureDescription) -> [String: Any] {
        var o: [String: Any] = ["name": f.name, "type": f.type.rawValue, "optional": f.isOptional, "short_description": f.shortDescription]
        if let c = f.multiArrayConstraint {
            o["shape"] = c.shape
            o["data_type"] = c.dataType.rawValue
            switch c.shapeConstraint {
            case .unspecified: break
            case let .enumerated(shapes): o["enumerated_shapes"] = shapes
            case let .range(ranges): o["shape_range"] = ranges.map(range)
            }
        }
        if let c = f.imageConstraint {
            o["width"] = c.pixelsWide
            o["height"] = c.pixelsHigh
            o["color_space"] = c.colorSpace.rawValue
            switch c.sizeConstraint {
            case .unspecified: break
            case let .enumerated(sizes): o["enumerated_sizes"] = sizes.map { [$0.width, $0.height] }
            case let .range(w, h): o["size_range"] = ["width": range(w), "height": range(h)]
            }
        }
        if let k = f.dictionaryKeyType { o["key_type"] = k.rawValue }
        if let e = f.sequenceElementType { o["element_type"] = e.rawValue }
        return o
    }
    var labels: Any = NSNull()
    switch d.classLabels {
    case let .strings(s)?: labels = s
    case let .int64s(v)?: labels = v
    case nil: break
    }
    return [
        "inputs": d.inputs.map(feature),
        "outputs": d.outputs.map(feature),
        "predicted_feature_name": d.predictedFeatureName ?? NSNull(),
        "predicted_probabilities_name": d.predictedProbabilitiesName ?? NSNull(),
        "class_labels": labels,
        "metadata": ["author": d.metadata.author, "license": d.metadata.license,
                     "short_description": d.metadata.shortDescription, "version_string": d.metadata.versionString,
                     "user_defined": d.metadata.userDefined] as [String: Any],
        "model_type": d.modelType,
        "specification_version": d.specificationVersion ?? NSNull(),
    ]
}
