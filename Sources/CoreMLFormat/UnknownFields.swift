extension Spec {
    /// Protobuf wire types (the low three bits of a field key).
    public enum WireType: UInt8, Sendable, CustomStringConvertible {
        case varint = 0
        case fixed64 = 1
        case lengthDelimited = 2
        case startGroup = 3
        case endGroup = 4
        case fixed32 = 5

        public var description: String {
            switch self {
            case .varint: return "varint"
            case .fixed64: return "fixed64"
            case .lengthDelimited: return "length-delimited"
            case .startGroup: return "start-group"
            case .endGroup: return "end-group"
            case .fixed32: return "fixed32"
            }
        }
    }

    /// A field that mlconv's schema does not declare, kept byte-for-byte so that re-encoding a
    /// decoded model does not lose it.
    public struct UnknownField: Hashable, Sendable {
        /// Protobuf field number.
        public var fieldNumber: UInt32
        public var wireType: WireType
        /// The field's value exactly as it followed the key on the wire: for length-delimited
        /// fields this includes the length varint.
        public var data: [UInt8]

        public init(fieldNumber: UInt32, wireType: WireType, data: [UInt8]) {
            self.fieldNumber = fieldNumber
            self.wireType = wireType
            self.data = data
        }

        /// Payload size without a length prefix.
        public var payloadByteCount: Int {
            guard wireType == .lengthDelimited else { return data.count }
            var i = 0
            while i < data.count, data[i] & 0x80 != 0 { i += 1 }
            return max(0, data.count - (i + 1))
        }
    }

    /// The unknown fields of one message, in wire order.
    public typealias UnknownFields = [UnknownField]
}
