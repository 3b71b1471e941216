extension Spec {
    /// The type of a model input or output (`FeatureTypes.proto` `FeatureType`): a `kind` plus
    /// the `isOptional` flag.
    public struct FeatureType: Equatable, Sendable {
        public var kind: Kind
        /// Optional inputs may be omitted at prediction time.
        public var isOptional: Bool
        public var unknownFields: UnknownFields

        public init(_ kind: Kind, isOptional: Bool = false, unknownFields: UnknownFields = []) {
            self.kind = kind
            self.isOptional = isOptional
            self.unknownFields = unknownFields
        }

        /// The `FeatureType.Type` oneof.
        public enum Kind: Equatable, Sendable {
            case none
            case int64
            case double
            case string
            case image(ImageFeatureType)
            case multiArray(ArrayFeatureType)
            case dictionary(DictionaryFeatureType)
            case sequence(SequenceFeatureType)
            case state(StateFeatureType)
        }
    }

    /// A closed size interval; `upperBound == -1` means unbounded.
    public struct SizeRange: Equatable, Sendable {
        public var lowerBound: UInt64
        public var upperBound: Int64
        public init(lowerBound: UInt64 = 0, upperBound: Int64 = 0) {
            self.lowerBound = lowerBound
            self.upperBound = upperBound
        }
    }

    /// An image feature. Core ML feeds images to a neural network as [C, H, W] with C = 3
    /// (RGB or BGR channel order per `colorSpace`) or C = 1 (grayscale), values 0…255 before
    /// the network's preprocessing.
    public struct ImageFeatureType: Equatable, Sendable {
        public var width: Int64
        public var height: Int64
        public var colorSpace: ColorSpace
        public var sizeFlexibility: SizeFlexibility?
        public var unknownFields: UnknownFields

        public init(width: Int64, height: Int64, colorSpace: ColorSpace,
                    sizeFlexibility: SizeFlexibility? = nil, unknownFields: UnknownFields = []) {
            self.width = width
            self.height = height
            self.colorSpace = colorSpace
            self.sizeFlexibility = sizeFlexibility
            self.unknownFields = unknownFields
        }

        public struct ColorSpace: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
            public var rawValue: Int32
            public init(rawValue: Int32) { self.rawValue = rawValue }
            public static let invalid = ColorSpace(rawValue: 0)
            public static let grayscale = ColorSpace(rawValue: 10)
            public static let rgb = ColorSpace(rawValue: 20)
            public static let bgr = ColorSpace(rawValue: 30)
            public static let grayscaleFloat16 = ColorSpace(rawValue: 40)
            public var description: String {
                switch rawValue {
                case 0: return "INVALID_COLOR_SPACE"
                case 10: return "GRAYSCALE"
                case 20: return "RGB"
                case 30: return "BGR"
                case 40: return "GRAYSCALE_FLOAT16"
                default: return "ColorSpace(\(rawValue))"
                }
            }
        }

        public struct ImageSize: Equatable, Sendable {
            public var width: UInt64
            public var height: UInt64
            public init(width: UInt64, height: UInt64) {
                self.width = width
                self.height = height
            }
        }

        /// The `SizeFlexibility` oneof (spec 3+).
        public enum SizeFlexibility: Equatable, Sendable {
            case enumeratedSizes([ImageSize])
            case imageSizeRange(width: SizeRange?, height: SizeRange?)
        }
    }

    /// A multi-dimensional array feature (`ArrayFeatureType`). `shape` is the default shape;
    /// under the classic rank-5 mapping a rank-1 shape is [C] and a rank-3 shape is [C, H, W].
    public struct ArrayFeatureType: Equatable, Sendable {
        public var shape: [Int64]
        public var dataType: DataType
        public var shapeFlexibility: ShapeFlexibility?
        public var defaultValue: DefaultValue?
        public var unknownFields: UnknownFields

        public init(shape: [Int64], dataType: DataType, shapeFlexibility: ShapeFlexibility? = nil,
                    defaultValue: DefaultValue? = nil, unknownFields: UnknownFields = []) {
            self.shape = shape
            self.dataType = dataType
            self.shapeFlexibility = shapeFlexibility
            self.defaultValue = defaultValue
            self.unknownFields = unknownFields
        }

        /// `ArrayDataType`; raw value = (kind << 16) | bits.
        public struct DataType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
            public var rawValue: Int32
            public init(rawValue: Int32) { self.rawValue = rawValue }
            public static let invalid = DataType(rawValue: 0)
            public static let float32 = DataType(rawValue: 65568)
            public static let double = DataType(rawValue: 65600)
            public static let int32 = DataType(rawValue: 131104)
            public static let float16 = DataType(rawValue: 65552)
            public var description: String {
                switch rawValue {
                case 0: return "INVALID_ARRAY_DATA_TYPE"
                case 65568: return "FLOAT32"
                case 65600: return "DOUBLE"
                case 131104: return "INT32"
                case 65552: return "FLOAT16"
                default: return "ArrayDataType(\(rawValue))"
                }
            }
        }

        /// The `ShapeFlexibility` oneof (spec 3+).
        public enum ShapeFlexibility: Equatable, Sendable {
            case enumeratedShapes([[Int64]])
            /// One range per dimension.
            case shapeRange([SizeRange])
        }

        /// The `defaultOptionalValue` oneof (spec 6+).
        public enum DefaultValue: Equatable, Sendable {
            case int(Int32)
            case float(Float)
            case double(Double)
        }
    }

    public struct DictionaryFeatureType: Equatable, Sendable {
        public enum KeyType: Equatable, Sendable { case none, int64, string }
        public var keyType: KeyType
        public var unknownFields: UnknownFields
        public init(keyType: KeyType, unknownFields: UnknownFields = []) {
            self.keyType = keyType
            self.unknownFields = unknownFields
        }
    }

    public struct SequenceFeatureType: Equatable, Sendable {
        public enum ElementType: Equatable, Sendable { case none, int64, string }
        public var elementType: ElementType
        public var sizeRange: SizeRange?
        public var unknownFields: UnknownFields
        public init(elementType: ElementType, sizeRange: SizeRange? = nil, unknownFields: UnknownFields = []) {
            self.elementType = elementType
            self.sizeRange = sizeRange
            self.unknownFields = unknownFields
        }
    }

    /// ML program state (spec 9+).
    public struct StateFeatureType: Equatable, Sendable {
        public var arrayType: ArrayFeatureType?
        public var unknownFields: UnknownFields
        public init(arrayType: ArrayFeatureType?, unknownFields: UnknownFields = []) {
            self.arrayType = arrayType
            self.unknownFields = unknownFields
        }
    }
}

// MARK: - C bridge

/// A parameterless message (Int64FeatureType, SoftmaxLayerParams, ActivationReLU, …).
/// Unknown fields inside it are reported by the reader but not kept.
struct EmptyMessage: CMessageCodable {
    init() {}
    init(reading r: CReader) throws {}
    func write(to w: CWriter) throws {}
}

extension Spec.FeatureType: CMessageCodable {
    init(reading r: CReader) throws {
        switch r.oneofCase(1) {
        case 1: kind = .int64; _ = try r.message(1, as: EmptyMessage.self)
        case 2: kind = .double; _ = try r.message(2, as: EmptyMessage.self)
        case 3: kind = .string; _ = try r.message(3, as: EmptyMessage.self)
        case 4: kind = .image(try r.message(4)!)
        case 5: kind = .multiArray(try r.message(5)!)
        case 6: kind = .dictionary(try r.message(6)!)
        case 7: kind = .sequence(try r.message(7)!)
        case 8: kind = .state(try r.message(8)!)
        default: kind = .none
        }
        isOptional = r.bool(1000)
        unknownFields = r.unknownFields
    }
    func write(to w: CWriter) throws {
        switch kind {
        case .none: break
        case .int64: try w.set(1, message: EmptyMessage())
        case .double: try w.set(2, message: EmptyMessage())
        case .string: try w.set(3, message: EmptyMessage())
        case let .image(t): try w.set(4, message: t)
        case let .multiArray(t): try w.set(5, message: t)
        case let .dictionary(t): try w.set(6, message: t)
        case let .sequence(t): try w.set(7, message: t)
        case let .state(t): try w.set(8, message: t)
        }
        w.set(1000, bool: isOptional)
        w.setUnknownFields(unknownFields)
    }
}

extension Spec.SizeRange: CMessageCodable {
    init(reading r: CReader) throws {
        lowerBound = r.uint64(1)
        upperBound = r.int64(2)
    }
    func write(to w: CWriter) throws {
        w.set(1, uint64: lowerBound)
        w.set(2, int64: upperBound)
    }
}

extension Spec.ImageFeatureType.ImageSize: CMessageCodable {
    init(reading r: CReader) throws {
        width = r.uint64(1)
        height = r.uint64(2)
    }
    func write(to w: CWriter) throws {
        w.set(1, uint64: width)
        w.set(2, uint64: height)
    }
}

private struct EnumeratedImageSizes: CMessageCodable {
    var sizes: [Spec.ImageFeatureType.ImageSize]
    init(sizes: [Spec.ImageFeatureType.ImageSize]) { self.sizes = sizes }
    init(reading r: CReader) throws { sizes = try r.messages(1) }
    func write(to w: CWriter) throws { try w.set(1, messages: sizes) }
}

private struct ImageSizeRange: CMessageCodable {
    var width: Spec.SizeRange?
    var height: Spec.SizeRange?
    init(width: Spec.SizeRange?, height: Spec.SizeRange?) {
        self.width = width
        self.height = height
    }
    init(reading r: CReader) throws {
        width = try r.message(1)
        height = try r.message(2)
    }
    func write(to w: CWriter) throws {
        try w.set(1, message: width)
        try w.set(2, message: height)
    }
}

extension Spec.ImageFeatureType: CMessageCodable {
    init(reading r: CReader) throws {
        width = r.int64(1)
        height = r.int64(2)
        colorSpace = ColorSpace(rawValue: r.enumValue(3))
        switch r.oneofCase(21) {
        case 21: sizeFlexibility = .enumeratedSizes(try r.message(21, as: EnumeratedImageSizes.self)!.sizes)
        case 31:
            let range = try r.message(31, as: ImageSizeRange.self)!
            sizeFlexibility = .imageSizeRange(width: range.width, height: range.height)
        default: sizeFlexibility = nil
        }
        unknownFields = r.unknownFields
    }
    func write(to w: CWriter) throws {
        w.set(1, int64: width)
        w.set(2, int64: height)
        w.set(3, enum: colorSpace.rawValue)
        switch sizeFlexibility {
        case nil: break
        case let .enumeratedSizes(sizes): try w.set(21, message: EnumeratedImageSizes(sizes: sizes))
        case let .imageSizeRange(width, height): try w.set(31, message: ImageSizeRange(width: width, height: height))
        }
        w.setUnknownFields(unknownFields)
    }
}

private struct ShapeMessage: CMessageCodable {
    var shape: [Int64]
    init(_ shape: [Int64]) { self.shape = shape }
    init(reading r: CReader) throws { shape = r.int64s(1) }
    func write(to w: CWriter) throws { w.set(1, int64s: shape) }
}

private struct EnumeratedShapes: CMessageCodable {
    var shapes: [ShapeMessage]
    init(_ shapes: [ShapeMessage]) { self.shapes = shapes }
    init(reading r: CReader) throws { shapes = try r.messages(1) }
    func write(to w: CWriter) throws { try w.set(1, messages: shapes) }
}

private struct ShapeRange: CMessageCodable {
    var ranges: [Spec.SizeRange]
    init(_ ranges: [Spec.SizeRange]) { self.ranges = ranges }
    init(reading r: CReader) throws { ranges = try r.messages(1) }
    func write(to w: CWriter) throws { try w.set(1, messages: ranges) }
}

extension Spec.ArrayFeatureType: CMessageCodable {
    init(reading r: CReader) throws {
        shape = r.int64s(1)
        dataType = DataType(rawValue: r.enumValue(2))
        switch r.oneofCase(21) {
        case 21: shapeFlexibility = .enumeratedShapes(try r.message(21, as: EnumeratedShapes.self)!.shapes.map(\.shape))
        case 31: shapeFlexibility = .shapeRange(try r.message(31, as: ShapeRange.self)!.ranges)
        default: shapeFlexibility = nil
        }
        switch r.oneofCase(41) {
        case 41: defaultValue = .int(r.int32(41))
        case 51: defaultValue = .float(r.float(51))
        case 61: defaultValue = .double(r.double(61))
        default: defaultValue = nil
        }
        unknownFields = r.unknownFields
    }
    func write(to w: CWriter) throws {
        w.set(1, int64s: shape)
        w.set(2, enum: dataType.rawValue)
        switch shapeFlexibility {
        case nil: break
        case let .enumeratedShapes(s): try w.set(21, message: EnumeratedShapes(s.map(ShapeMessage.init)))
        case let .shapeRange(r): try w.set(31, message: ShapeRange(r))
        }
        switch defaultValue {
        case nil: break
        case let .int(v): w.set(41, int32: v)
        case let .float(v): w.set(51, float: v)
        case let .double(v): w.set(61, double: v)
        }
        w.setUnknownFields(unknownFields)
    }
}

extension Spec.DictionaryFeatureType: CMessageCodable {
    init(reading r: CReader) throws {
        switch r.oneofCase(1) {
        case 1: keyType = .int64; _ = try r.message(1, as: EmptyMessage.self)
        case 2: keyType = .string; _ = try r.message(2, as: EmptyMessage.self)
        default: keyType = .none
        }
        unknownFields = r.unknownFields
    }
    func write(to w: CWriter) throws {
        switch keyType {
        case .none: break
        case .int64: try w.set(1, message: EmptyMessage())
        case .string: try w.set(2, message: EmptyMessage())
        }
        w.setUnknownFields(unknownFields)
    }
}

extension Spec.SequenceFeatureType: CMessageCodable {
    init(reading r: CReader) throws {
        switch r.oneofCase(1) {
        case 1: elementType = .int64; _ = try r.message(1, as: EmptyMessage.self)
        case 3: elementType = .string; _ = try r.message(3, as: EmptyMessage.self)
        default: elementType = .none
        }
        sizeRange = try r.message(101)
        unknownFields = r.unknownFields
    }
    func write(to w: CWriter) throws {
        switch elementType {
        case .none: break
        case .int64: try w.set(1, message: EmptyMessage())
        case .string: try w.set(3, message: EmptyMessage())
        }
        try w.set(101, message: sizeRange)
        w.setUnknownFields(unknownFields)
    }
}

extension Spec.StateFeatureType: CMessageCodable {
    init(reading r: CReader) throws {
        arrayType = try r.message(1)
        unknownFields = r.unknownFields
    }
    func write(to w: CWriter) throws {
        try w.set(1, message: arrayType)
        w.setUnknownFields(unknownFields)
    }
}
