import MLGraph

/// Registry of optimized kernels: oneDNN (one file per op under Kernels/DNNL/) and plain
/// data-movement kernels (Kernels/Fast/). Each factory declines
/// (returns nil) configurations it does not cover; the reference kernel then runs.
enum OptimizedKernels {
    static let table: [OpKind: KernelFactory] = [
        .conv2d: DNNLConv2D.factory,
        .deconv2d: DNNLDeconv2D.factory,
        .dense: DNNLDense.factory,
        .pool2d: DNNLPool2D.factory,
        .globalPool2d: DNNLPool2D.globalFactory,
        .batchNorm: DNNLBatchNorm.factory,
        .activation: DNNLActivation.factory,
        .softmax: DNNLSoftmax.factory,
        .concat: DNNLConcat.factory,
        .elementwise: DNNLElementwise.factory,
        .crop: FastCopyKernels.crop, .pad: FastCopyKernels.pad, .upsample2d: FastCopyKernels.upsample,
        .recurrent: DNNLRecurrent.factory,
        // MARK: shape and data movement ops (issue 9)
        .matmul: DNNLMatMul.factory,
        // MARK: reductions and normalisation ops
        .reduce: DNNLReduction.factory,
        .logSoftmax: DNNLSoftmax.factory,
        .layerNorm: DNNLLayerNorm.factory,
        // MARK: elementwise math ops (DNNLElementwiseMath.swift)
        .unary: DNNLUnary.factory, .binary: DNNLBinary.factory, .clip: DNNLClip.factory,
        // MARK: convolution and pooling in 1-D and 3-D, resampling (DNNLWindowND.swift, DNNLResize.swift)
        .conv1d: DNNLConvND.factory, .conv3d: DNNLConvND.factory,
        .pool1d: DNNLPoolND.factory, .pool3d: DNNLPoolND.factory, .deconv3d: DNNLDeconvND.factory, .deconv1d: DNNLDeconvND.factory,
        .resize: DNNLResize.factory,
        // MARK: transpose sinking (issue 12): a oneDNN reorder for the transposes left (DNNLTranspose.swift)
        .transpose: DNNLTranspose.factory,
    ]
}

extension OptimizedKernels {
    /// Kinds whose optimized kernel is plain memory copying (Kernels/Fast/) rather than oneDNN.
    static let memcpyKinds: Set<OpKind> = [.crop, .pad, .upsample2d]
}
