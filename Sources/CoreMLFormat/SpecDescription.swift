extension Spec {
    /// Inputs, outputs and metadata of a model (`Model.proto` `ModelDescription`).
    public struct ModelDescription: Equatable, Sendable {
        public var input: [FeatureDescription]
        public var output: [FeatureDescription]
        /// Classifier/regressor: name of the primary output.
        public var predictedFeatureName: String
        /// Classifier: name of the output holding class probabilities.
        public var predictedProbabilitiesName: String
        /// ML program state tensors (spec 9+).
        public var state: [FeatureDescription]
        /// Multi-function ML programs (spec 9+).
        public var functions: [FunctionDescription]
        public var defaultFunctionName: String
        /// Inputs used only for on-device training.
        public var trainingInput: [FeatureDescription]
        public var metadata: Metadata?
        public var unknownFields: UnknownFields

        public init(input: [FeatureDescription] = [], output: [FeatureDescription] = [],
                    predictedFeatureName: String = "", predictedProbabilitiesName: String = "",
                    state: [FeatureDescription] = [], functions: [FunctionDescription] = [],
                    defaultFunctionName: String = "", trainingInput: [FeatureDescription] = [],
                    metadata: Metadata? = nil, unknownFields: UnknownFields = []) {
            self.input = input
            self.output = output
            self.predictedFeatureName = predictedFeatureName
            self.predictedProbabilitiesName = predictedProbabilitiesName
            self.state = state
            self.functions = functions
            self.defaultFunctionName = defaultFunctionName
            self.trainingInput = trainingInput
            self.metadata = metadata
            self.unknownFields = unknownFields
        }
    }

    /// One function of a multi-function ML program (`Model.proto` `FunctionDescription`).
    public struct FunctionDescription: Equatable, Sendable {
        public var name: String
        public var input: [FeatureDescription]
        public var output: [FeatureDescription]
        public var state: [FeatureDescription]
        public var predictedFeatureName: String
        public var predictedProbabilitiesName: String
        public var unknownFields: UnknownFields

        public init(name: String = "", input: [FeatureDescription] = [], output: [FeatureDescription] = [],
                    state: [FeatureDescription] = [], predictedFeatureName: String = "",
                    predictedProbabilitiesName: String = "", unknownFields: UnknownFields = []) {
            self.name = name
            self.input = input
            self.output = output
            self.state = state
            self.predictedFeatureName = predictedFeatureName
            self.predictedProbabilitiesName = predictedProbabilitiesName
            self.unknownFields = unknownFields
        }
    }

    /// A named, typed input or output (`Model.proto` `FeatureDescription`).
    public struct FeatureDescription: Equatable, Sendable {
        public var name: String
        public var shortDescription: String
        public var type: FeatureType?
        public var unknownFields: UnknownFields

        public init(name: String, shortDescription: String = "", type: FeatureType?,
                    unknownFields: UnknownFields = []) {
            self.name = name
            self.shortDescription = shortDescription
            self.type = type
            self.unknownFields = unknownFields
        }
    }

    /// Model metadata (`Model.proto` `Metadata`).
    public struct Metadata: Equatable, Sendable {
        public var shortDescription: String
        public var versionString: String
        public var author: String
        public var license: String
        /// `map<string, string> userDefined`, in wire order (so re-encoding is byte-stable).
        public var userDefined: [StringPair]
        public var unknownFields: UnknownFields

        public init(shortDescription: String = "", versionString: String = "", author: String = "",
                    license: String = "", userDefined: [StringPair] = [], unknownFields: UnknownFields = []) {
            self.shortDescription = shortDescription
            self.versionString = versionString
            self.author = author
            self.license = license
            self.userDefined = userDefined
            self.unknownFields = unknownFields
        }

        /// `userDefined` as a dictionary (the last entry wins for duplicate keys, as in protobuf).
        public var userDefinedDictionary: [String: String] {
            Dictionary(userDefined.map { ($0.key, $0.value) }, uniquingKeysWith: { _, b in b })
        }
    }

    /// One entry of a `map<string, string>`.
    public struct StringPair: Equatable, Sendable {
        public var key: String
        public var value: String
        public init(key: String, value: String) {
            self.key = key
            self.value = value
        }
    }
}

// MARK: - C bridge

extension Spec.ModelDescription: CMessageCodable {
    init(reading r: CReader) throws {
        input = try r.messages(1)
        output = try r.messages(10)
        predictedFeatureName = r.string(11)
        predictedProbabilitiesName = r.string(12)
        state = try r.messages(13)
        functions = try r.messages(20)
        defaultFunctionName = r.string(21)
        trainingInput = try r.messages(50)
        metadata = try r.message(100)
        unknownFields = r.unknownFields
    }
    func write(to w: CWriter) throws {
        try w.set(1, messages: input)
        try w.set(10, messages: output)
        try w.set(11, string: predictedFeatureName)
        try w.set(12, string: predictedProbabilitiesName)
        try w.set(13, messages: state)
        try w.set(20, messages: functions)
        try w.set(21, string: defaultFunctionName)
        try w.set(50, messages: trainingInput)
        try w.set(100, message: metadata)
        w.setUnknownFields(unknownFields)
    }
}

extension Spec.FunctionDescription: CMessageCodable {
    init(reading r: CReader) throws {
        name = r.string(1)
        input = try r.messages(2)
        output = try r.messages(3)
        predictedFeatureName = r.string(4)
        predictedProbabilitiesName = r.string(5)
        state = try r.messages(6)
        unknownFields = r.unknownFields
    }
    func write(to w: CWriter) throws {
        try w.set(1, string: name)
        try w.set(2, messages: input)
        try w.set(3, messages: output)
        try w.set(4, string: predictedFeatureName)
        try w.set(5, string: predictedProbabilitiesName)
        try w.set(6, messages: state)
        w.setUnknownFields(unknownFields)
    }
}

extension Spec.FeatureDescription: CMessageCodable {
    init(reading r: CReader) throws {
        name = r.string(1)
        shortDescription = r.string(2)
        type = try r.message(3)
        unknownFields = r.unknownFields
    }
    func write(to w: CWriter) throws {
        try w.set(1, string: name)
        try w.set(2, string: shortDescription)
        try w.set(3, message: type)
        w.setUnknownFields(unknownFields)
    }
}

extension Spec.Metadata: CMessageCodable {
    init(reading r: CReader) throws {
        shortDescription = r.string(1)
        versionString = r.string(2)
        author = r.string(3)
        license = r.string(4)
        userDefined = try r.messages(100)
        unknownFields = r.unknownFields
    }
    func write(to w: CWriter) throws {
        try w.set(1, string: shortDescription)
        try w.set(2, string: versionString)
        try w.set(3, string: author)
        try w.set(4, string: license)
        try w.set(100, messages: userDefined)
        w.setUnknownFields(unknownFields)
    }
}

extension Spec.StringPair: CMessageCodable {
    init(reading r: CReader) throws {
        key = r.string(1)
        value = r.string(2)
    }
    func write(to w: CWriter) throws {
        try w.set(1, string: key)
        try w.set(2, string: value)
    }
}
