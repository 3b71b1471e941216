// Convenience view of the generated `Spec.CustomLayerParams` (Generated/NeuralNetwork.swift;
// its `parameters` map is an ordered map, see ORDERED_MAPS in Scripts/gen_swift_spec.py, so the
// entries keep the file's order and re-encode byte-identically). This file only flattens a
// parameter's value message into one enum.

extension Spec.CustomLayerParams {
    /// A custom layer parameter's value (`CustomLayerParamValue`'s `value` oneof, flattened).
    public enum ParamValue: Equatable, Sendable {
        case double(Double)
        case string(String)
        case int(Int32)
        case long(Int64)
        case bool(Bool)
        /// The value message is absent or has no member set.
        case unset
    }

    /// `parameters` as a dictionary (a repeated key keeps its last value, as protobuf merges).
    public var parameterDictionary: [String: ParamValue] {
        Dictionary(parameters.map { ($0.key, $0.paramValue) }, uniquingKeysWith: { _, b in b })
    }
}

extension Spec.CustomLayerParams.ParametersEntry {
    /// An entry `key` → `paramValue` (`.unset` leaves the value message absent).
    public init(key: String, paramValue: Spec.CustomLayerParams.ParamValue) {
        self.init(key: key)
        self.paramValue = paramValue
    }

    /// The entry's value as a `ParamValue`. Setting replaces the value message (its unknown
    /// fields are dropped); `.unset` removes it.
    public var paramValue: Spec.CustomLayerParams.ParamValue {
        get {
            switch value?.value {
            case nil: return .unset
            case let .doubleValue(v)?: return .double(v)
            case let .stringValue(v)?: return .string(v)
            case let .intValue(v)?: return .int(v)
            case let .longValue(v)?: return .long(v)
            case let .boolValue(v)?: return .bool(v)
            }
        }
        set {
            switch newValue {
            case .unset: value = nil
            case let .double(v): value = .init(value: .doubleValue(v))
            case let .string(v): value = .init(value: .stringValue(v))
            case let .int(v): value = .init(value: .intValue(v))
            case let .long(v): value = .init(value: .longValue(v))
            case let .bool(v): value = .init(value: .boolValue(v))
            }
        }
    }
}
