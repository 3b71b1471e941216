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
        .reshape: ReferenceReshape.make,
        .transpose: ReferenceTranspose.make,
        .elementwise: ReferenceElementwise.make,
        .concat: ReferenceConcat.make,
        .repeatVector: ReferenceRepeatVector.make,
        .identity: ReferenceIdentity.make,
        .custom: CustomLayerKernel.make,
        .recurrent: ReferenceRecurrent.make,
        .embedding: ReferenceEmbedding.make,
        .sequenceMask: ReferenceSequenceMask.make, .applyMask: ReferenceApplyMask.make,
        // MARK: elementwise math ops
        .unary: ReferenceUnary.make, .binary: ReferenceBinary.make, .clip: ReferenceClip.make,
    ]
}
