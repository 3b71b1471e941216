import MLGraph

/// Registry of reference kernels (one file per op under Kernels/Reference/): plain, obviously
/// correct Swift loops that define each op's numerics — the oracle that optimized kernels and
/// converters are tested against. Single-threaded.
enum ReferenceKernels {
    static let table: [OpKind: KernelFactory] = [
        .conv2d: ReferenceConv2D.make,
        .deconv2d: ReferenceDeconv2D.make,
        .dense: ReferenceDense.make,
        .batchNorm: ReferenceBatchNorm.make,
        .activation: ReferenceActivation.make,
        .softmax: ReferenceSoftmax.make,
        .prelu: ReferencePReLU.make,
        .pool2d: ReferencePool2D.make,
        .globalPool2d: ReferenceGlobalPool2D.make,
        .pad: ReferencePad.make,
        .crop: ReferenceCrop.make,
        .upsample2d: ReferenceUpsample2D.make,
        .reshape: ReferenceReshape.make, .reshapeND: ReferenceReshape.make,
        .transpose: ReferenceTranspose.make,
        .elementwise: ReferenceElementwise.make,
        .concat: ReferenceConcat.make,
        .repeatVector: ReferenceRepeatVector.make,
        .identity: ReferenceIdentity.make,
        .custom: CustomLayerKernel.make,
        .recurrent: ReferenceRecurrent.make,
        .embedding: ReferenceEmbedding.make,
        .sequenceMask: ReferenceSequenceMask.make, .applyMask: ReferenceApplyMask.make,
        // MARK: shape and data movement ops (issue 9)
        .matmul: ReferenceMatMul.make, .constant: ReferenceConstant.make,
        .squeeze: ReferenceRankChange.make, .expandDims: ReferenceRankChange.make,
        .stack: ReferenceStack.make, .split: ReferenceSplit.make,
        .sliceByIndex: ReferenceSlice.make, .sliceBySize: ReferenceSlice.make, .tile: ReferenceTile.make,
        .spaceToDepth: ReferenceSpaceDepth.make, .depthToSpace: ReferenceSpaceDepth.make,
        .resize: ReferenceResize.make, .bandPart: ReferenceBandPart.make, .cumsum: ReferenceCumsum.make,
        // MARK: reductions and normalisation ops
        .reduce: ReferenceReduce.make,
        .logSoftmax: ReferenceSoftmax.make,
        .layerNorm: ReferenceMeanVarianceNorm.make,
        .instanceNorm: ReferenceMeanVarianceNorm.make,
        .l2Norm: ReferenceL2Norm.make,
        .localResponseNorm: ReferenceLocalResponseNorm.make,
        // MARK: typed ops (TypedKernels.swift)
        .cast: ReferenceCast.make,
        .argmax: ReferenceArgReduce.make,
        .argmin: ReferenceArgReduce.make,
        .compare: ReferenceCompare.make,
        .logical: ReferenceLogical.make,
        .select: ReferenceSelect.make,
        .gather: ReferenceGather.make,
        .gatherND: ReferenceGatherND.make,
        .gatherAlongAxis: ReferenceGatherAlongAxis.make,
        .oneHot: ReferenceOneHot.make,
        .range1d: ReferenceRange1D.make,
        .fill: ReferenceFill.make,
        .topk: ReferenceTopK.make,
        // MARK: elementwise math ops
        .unary: ReferenceUnary.make, .binary: ReferenceBinary.make, .clip: ReferenceClip.make,
        // MARK: scatter, reverse, sort, einsum, windows, NMS ops (Scatter.swift, ReorderOps.swift, Einsum.swift, NonMaximumSuppression.swift)
        .scatter: ReferenceScatter.make, .scatterND: ReferenceScatterND.make, .scatterAlongAxis: ReferenceScatterAlongAxis.make,
        .reverse: ReferenceReverse.make, .reverseSequence: ReferenceReverseSequence.make, .argsort: ReferenceArgsort.make,
        .einsum: ReferenceEinsum.make, .slidingWindows: ReferenceSlidingWindows.make,
        .nonMaximumSuppression: ReferenceNonMaximumSuppression.make,
        // MARK: control flow and dynamic shapes (ControlFlow.swift; run by Model's dynamic executor)
        .cond: ControlFlowKernels.dynamicOnly, .whileLoop: ControlFlowKernels.dynamicOnly,
        .makeList: ControlFlowKernels.dynamicOnly, .listRead: ControlFlowKernels.dynamicOnly,
        .listWrite: ControlFlowKernels.dynamicOnly, .listGather: ControlFlowKernels.dynamicOnly,
        .listScatter: ControlFlowKernels.dynamicOnly, .listLength: ControlFlowKernels.dynamicOnly,
        .shape: ReferenceShape.make,
        // MARK: convolution and pooling in 1-D and 3-D (ConvPoolND.swift)
        .conv1d: ReferenceConvND.make, .conv3d: ReferenceConvND.make,
        .pool1d: ReferencePoolND.make, .pool3d: ReferencePoolND.make, .deconv3d: ReferenceDeconv3D.make, .deconv1d: ReferenceDeconv3D.make,
        // MARK: random ops (Random.swift)
        .random: ReferenceRandom.make,
    ]
}
