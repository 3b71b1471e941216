// Recurrent layer parameters. Input-to-hidden matrices are [outputVectorSize, inputVectorSize],
// recursion (hidden-to-hidden) matrices [outputVectorSize, outputVectorSize], bias and
// peephole vectors [outputVectorSize], all row-major (Apple's NeuralNetwork.proto).

extension Spec {
    /// `SimpleRecurrentLayerParams`: h_t = activation(W x_t + R h_{t-1} + b).
    public struct SimpleRecurrentLayerParams: Equatable, Sendable {
        public var inputVectorSize: UInt64
        public var outputVectorSize: UInt64
        public var activation: ActivationParams?
        public var sequenceOutput: Bool
        public var hasBiasVector: Bool
        public var weightMatrix: WeightParams?
        public var recursionMatrix: WeightParams?
        public var biasVector: WeightParams?
        public var reverseInput: Bool
        public init(inputVectorSize: UInt64, outputVectorSize: UInt64, activation: ActivationParams?,
                    sequenceOutput: Bool = false, hasBiasVector: Bool = false, weightMatrix: WeightParams? = nil,
                    recursionMatrix: WeightParams? = nil, biasVector: WeightParams? = nil, reverseInput: Bool = false) {
            self.inputVectorSize = inputVectorSize
            self.outputVectorSize = outputVectorSize
            self.activation = activation
            self.sequenceOutput = sequenceOutput
            self.hasBiasVector = hasBiasVector
            self.weightMatrix = weightMatrix
            self.recursionMatrix = recursionMatrix
            self.biasVector = biasVector
            self.reverseInput = reverseInput
        }
    }

    /// `GRULayerParams`: gates z (update), r (reset), o (output); the reset gate is applied
    /// before the recursion matrix multiply. `activations` = [gate activation, output activation].
    public struct GRULayerParams: Equatable, Sendable {
        public var inputVectorSize: UInt64
        public var outputVectorSize: UInt64
        public var activations: [ActivationParams]
        public var sequenceOutput: Bool
        public var hasBiasVectors: Bool
        public var updateGateWeightMatrix: WeightParams?
        public var resetGateWeightMatrix: WeightParams?
        public var outputGateWeightMatrix: WeightParams?
        public var updateGateRecursionMatrix: WeightParams?
        public var resetGateRecursionMatrix: WeightParams?
        public var outputGateRecursionMatrix: WeightParams?
        public var updateGateBiasVector: WeightParams?
        public var resetGateBiasVector: WeightParams?
        public var outputGateBiasVector: WeightParams?
        public var reverseInput: Bool
        public init(inputVectorSize: UInt64, outputVectorSize: UInt64, activations: [ActivationParams] = [],
                    sequenceOutput: Bool = false, hasBiasVectors: Bool = false,
                    updateGateWeightMatrix: WeightParams? = nil, resetGateWeightMatrix: WeightParams? = nil,
                    outputGateWeightMatrix: WeightParams? = nil, updateGateRecursionMatrix: WeightParams? = nil,
                    resetGateRecursionMatrix: WeightParams? = nil, outputGateRecursionMatrix: WeightParams? = nil,
                    updateGateBiasVector: WeightParams? = nil, resetGateBiasVector: WeightParams? = nil,
                    outputGateBiasVector: WeightParams? = nil, reverseInput: Bool = false) {
            self.inputVectorSize = inputVectorSize
            self.outputVectorSize = outputVectorSize
            self.activations = activations
            self.sequenceOutput = sequenceOutput
            self.hasBiasVectors = hasBiasVectors
            self.updateGateWeightMatrix = updateGateWeightMatrix
            self.resetGateWeightMatrix = resetGateWeightMatrix
            self.outputGateWeightMatrix = outputGateWeightMatrix
            self.updateGateRecursionMatrix = updateGateRecursionMatrix
            self.resetGateRecursionMatrix = resetGateRecursionMatrix
            self.outputGateRecursionMatrix = outputGateRecursionMatrix
            self.updateGateBiasVector = updateGateBiasVector
            self.resetGateBiasVector = resetGateBiasVector
            self.outputGateBiasVector = outputGateBiasVector
            self.reverseInput = reverseInput
        }
    }

    /// `LSTMParams`: flags shared by uni- and bidirectional LSTMs. `forgetBias` adds 1 to the
    /// forget gate bias.
    public struct LSTMParams: Equatable, Sendable {
        public var sequenceOutput: Bool
        public var hasBiasVectors: Bool
        public var forgetBias: Bool
        public var hasPeepholeVectors: Bool
        public var coupledInputAndForgetGate: Bool
        public var cellClipThreshold: Float
        public init(sequenceOutput: Bool = false, hasBiasVectors: Bool = false, forgetBias: Bool = false,
                    hasPeepholeVectors: Bool = false, coupledInputAndForgetGate: Bool = false,
                    cellClipThreshold: Float = 0) {
            self.sequenceOutput = sequenceOutput
            self.hasBiasVectors = hasBiasVectors
            self.forgetBias = forgetBias
            self.hasPeepholeVectors = hasPeepholeVectors
            self.coupledInputAndForgetGate = coupledInputAndForgetGate
            self.cellClipThreshold = cellClipThreshold
        }
    }

    /// `LSTMWeightParams`: gates i (input), f (forget), z (block input), o (output).
    public struct LSTMWeightParams: Equatable, Sendable {
        public var inputGateWeightMatrix: WeightParams?
        public var forgetGateWeightMatrix: WeightParams?
        public var blockInputWeightMatrix: WeightParams?
        public var outputGateWeightMatrix: WeightParams?
        public var inputGateRecursionMatrix: WeightParams?
        public var forgetGateRecursionMatrix: WeightParams?
        public var blockInputRecursionMatrix: WeightParams?
        public var outputGateRecursionMatrix: WeightParams?
        public var inputGateBiasVector: WeightParams?
        public var forgetGateBiasVector: WeightParams?
        public var blockInputBiasVector: WeightParams?
        public var outputGateBiasVector: WeightParams?
        public var inputGatePeepholeVector: WeightParams?
        public var forgetGatePeepholeVector: WeightParams?
        public var outputGatePeepholeVector: WeightParams?
        public init() {}

        /// (field number, key path) pairs, in field-number order.
        static var fields: [(UInt32, WritableKeyPath<LSTMWeightParams, WeightParams?>)] { [
            (1, \.inputGateWeightMatrix), (2, \.forgetGateWeightMatrix), (3, \.blockInputWeightMatrix),
            (4, \.outputGateWeightMatrix), (20, \.inputGateRecursionMatrix), (21, \.forgetGateRecursionMatrix),
            (22, \.blockInputRecursionMatrix), (23, \.outputGateRecursionMatrix), (40, \.inputGateBiasVector),
            (41, \.forgetGateBiasVector), (42, \.blockInputBiasVector), (43, \.outputGateBiasVector),
            (60, \.inputGatePeepholeVector), (61, \.forgetGatePeepholeVector), (62, \.outputGatePeepholeVector),
        ] }
    }

    /// `UniDirectionalLSTMLayerParams`. `activations` = [gate (sigmoid), cell input (tanh),
    /// cell output (tanh)].
    public struct UniDirectionalLSTMLayerParams: Equatable, Sendable {
        public var inputVectorSize: UInt64
        public var outputVectorSize: UInt64
        public var activations: [ActivationParams]
        public var params: LSTMParams?
        public var weightParams: LSTMWeightParams?
        public var reverseInput: Bool
        public init(inputVectorSize: UInt64, outputVectorSize: UInt64, activations: [ActivationParams] = [],
                    params: LSTMParams? = nil, weightParams: LSTMWeightParams? = nil, reverseInput: Bool = false) {
            self.inputVectorSize = inputVectorSize
            self.outputVectorSize = outputVectorSize
            self.activations = activations
            self.params = params
            self.weightParams = weightParams
            self.reverseInput = reverseInput
        }
    }

    /// `BiDirectionalLSTMLayerParams`: `weightParams` = [forward, backward].
    public struct BiDirectionalLSTMLayerParams: Equatable, Sendable {
        public var inputVectorSize: UInt64
        public var outputVectorSize: UInt64
        public var activationsForwardLSTM: [ActivationParams]
        public var activationsBackwardLSTM: [ActivationParams]
        public var params: LSTMParams?
        public var weightParams: [LSTMWeightParams]
        public init(inputVectorSize: UInt64, outputVectorSize: UInt64, activationsForwardLSTM: [ActivationParams] = [],
                    activationsBackwardLSTM: [ActivationParams] = [], params: LSTMParams? = nil,
                    weightParams: [LSTMWeightParams] = []) {
            self.inputVectorSize = inputVectorSize
            self.outputVectorSize = outputVectorSize
            self.activationsForwardLSTM = activationsForwardLSTM
            self.activationsBackwardLSTM = activationsBackwardLSTM
            self.params = params
            self.weightParams = weightParams
        }
    }
}

// MARK: - C bridge

extension Spec.SimpleRecurrentLayerParams: CMessageCodable {
    init(reading r: CReader) throws {
        inputVectorSize = r.uint64(1)
        outputVectorSize = r.uint64(2)
        activation = try r.message(10)
        sequenceOutput = r.bool(15)
        hasBiasVector = r.bool(20)
        weightMatrix = try r.message(30)
        recursionMatrix = try r.message(31)
        biasVector = try r.message(32)
        reverseInput = r.bool(100)
    }
    func write(to w: CWriter) throws {
        w.set(1, uint64: inputVectorSize)
        w.set(2, uint64: outputVectorSize)
        try w.set(10, message: activation)
        w.set(15, bool: sequenceOutput)
        w.set(20, bool: hasBiasVector)
        try w.set(30, message: weightMatrix)
        try w.set(31, message: recursionMatrix)
        try w.set(32, message: biasVector)
        w.set(100, bool: reverseInput)
    }
}

extension Spec.GRULayerParams: CMessageCodable {
    init(reading r: CReader) throws {
        inputVectorSize = r.uint64(1)
        outputVectorSize = r.uint64(2)
        activations = try r.messages(10)
        sequenceOutput = r.bool(15)
        hasBiasVectors = r.bool(20)
        updateGateWeightMatrix = try r.message(30)
        resetGateWeightMatrix = try r.message(31)
        outputGateWeightMatrix = try r.message(32)
        updateGateRecursionMatrix = try r.message(50)
        resetGateRecursionMatrix = try r.message(51)
        outputGateRecursionMatrix = try r.message(52)
        updateGateBiasVector = try r.message(70)
        resetGateBiasVector = try r.message(71)
        outputGateBiasVector = try r.message(72)
        reverseInput = r.bool(100)
    }
    func write(to w: CWriter) throws {
        w.set(1, uint64: inputVectorSize)
        w.set(2, uint64: outputVectorSize)
        try w.set(10, messages: activations)
        w.set(15, bool: sequenceOutput)
        w.set(20, bool: hasBiasVectors)
        try w.set(30, message: updateGateWeightMatrix)
        try w.set(31, message: resetGateWeightMatrix)
        try w.set(32, message: outputGateWeightMatrix)
        try w.set(50, message: updateGateRecursionMatrix)
        try w.set(51, message: resetGateRecursionMatrix)
        try w.set(52, message: outputGateRecursionMatrix)
        try w.set(70, message: updateGateBiasVector)
        try w.set(71, message: resetGateBiasVector)
        try w.set(72, message: outputGateBiasVector)
        w.set(100, bool: reverseInput)
    }
}

extension Spec.LSTMParams: CMessageCodable {
    init(reading r: CReader) throws {
        sequenceOutput = r.bool(10)
        hasBiasVectors = r.bool(20)
        forgetBias = r.bool(30)
        hasPeepholeVectors = r.bool(40)
        coupledInputAndForgetGate = r.bool(50)
        cellClipThreshold = r.float(60)
    }
    func write(to w: CWriter) throws {
        w.set(10, bool: sequenceOutput)
        w.set(20, bool: hasBiasVectors)
        w.set(30, bool: forgetBias)
        w.set(40, bool: hasPeepholeVectors)
        w.set(50, bool: coupledInputAndForgetGate)
        w.set(60, float: cellClipThreshold)
    }
}

extension Spec.LSTMWeightParams: CMessageCodable {
    init(reading r: CReader) throws {
        self.init()
        for (n, kp) in Self.fields { self[keyPath: kp] = try r.message(n) }
    }
    func write(to w: CWriter) throws {
        for (n, kp) in Self.fields { try w.set(n, message: self[keyPath: kp]) }
    }
}

extension Spec.UniDirectionalLSTMLayerParams: CMessageCodable {
    init(reading r: CReader) throws {
        inputVectorSize = r.uint64(1)
        outputVectorSize = r.uint64(2)
        activations = try r.messages(10)
        params = try r.message(15)
        weightParams = try r.message(20)
        reverseInput = r.bool(100)
    }
    func write(to w: CWriter) throws {
        w.set(1, uint64: inputVectorSize)
        w.set(2, uint64: outputVectorSize)
        try w.set(10, messages: activations)
        try w.set(15, message: params)
        try w.set(20, message: weightParams)
        w.set(100, bool: reverseInput)
    }
}

extension Spec.BiDirectionalLSTMLayerParams: CMessageCodable {
    init(reading r: CReader) throws {
        inputVectorSize = r.uint64(1)
        outputVectorSize = r.uint64(2)
        activationsForwardLSTM = try r.messages(10)
        activationsBackwardLSTM = try r.messages(11)
        params = try r.message(15)
        weightParams = try r.messages(20)
    }
    func write(to w: CWriter) throws {
        w.set(1, uint64: inputVectorSize)
        w.set(2, uint64: outputVectorSize)
        try w.set(10, messages: activationsForwardLSTM)
        try w.set(11, messages: activationsBackwardLSTM)
        try w.set(15, message: params)
        try w.set(20, messages: weightParams)
    }
}
