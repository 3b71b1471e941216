// Core ML classic-layer lowering of conv1d / pool1d / deconv1d, and the reasoned refusal of conv3d / pool3d /
// deconv3d.
// See `CoreMLExporter.layerTable`.
import MLGraph

extension ExportWriter {
    mutating func lowerConvPoolND(_ node: Node, _ ins: [TensorType], _ inBlobs: [String], _ out: String) {
        switch node.op {
        case let .conv1d(a):
            // The writer lays rank-3 [N, W, C] out as [C, W, 1]: the steps are Core ML's H axis, so
            // a 1-D convolution is a convolution with a k×1 window; the weight [Cout, Cin/g, k]
            // has the bytes of Core ML's [Cout, Cin/g, k, 1].
            guard let x = ins.first, x.rank == 3, let padding = Self.onHeight(a.padding) else {
                fail(node, "conv1d on a non-NWC input", "Use a rank-3 (N, W, C) input.")
                return
            }
            let as2D = Conv2DAttributes(kernel: [a.kernel[0], 1], strides: [a.strides[0], 1], dilations: [a.dilations[0], 1],
                                        padding: padding, groups: a.groups, outputChannels: a.outputChannels, activation: a.activation)
            lowerConv(node, as2D, TensorType([x.shape[0], x.shape[1], 1, x.shape[2]]), inBlobs[0], out)
        case let .pool1d(a):
            guard ins.first?.rank == 3, let padding = Self.onHeight(a.padding) else {
                fail(node, "pool1d on a non-NWC input", "Use a rank-3 (N, W, C) input.")
                return
            }
            emit(node.name, inBlobs, [out], .pooling(Spec.PoolingLayerParams(
                type: a.kind == .max ? .max : .average, kernelSize: [UInt64(a.kernel[0]), 1],
                stride: [UInt64(a.strides[0]), 1], padding: Self.poolPadding(padding), avgPoolExcludePadding: true)))
        case let .deconv1d(a):
            // As conv1d: a k×1 deconvolution on the [C, W, 1] blob; the weight [Cin, Cout/g, k] has
            // the bytes of Core ML's [Cin, Cout/g, k, 1].
            guard let x = ins.first, x.rank == 3, let padding = Self.onHeight(a.padding) else {
                fail(node, "deconv1d on a non-NWC input", "Use a rank-3 (N, W, C) input.")
                return
            }
            let as2D = Deconv2DAttributes(kernel: [a.kernel[0], 1], strides: [a.strides[0], 1], dilations: [a.dilations[0], 1],
                                          padding: padding, outputPadding: [a.outputPadding[0], 0], groups: a.groups,
                                          outputChannels: a.outputChannels, activation: a.activation)
            lowerDeconv(node, as2D, TensorType([x.shape[0], x.shape[1], 1, x.shape[2]]), inBlobs[0], out)
        case .conv3d, .pool3d, .deconv3d:
            _ = refuseVolumetric(node)
        default:
            fail(node, "\(node.op.name) is not a 1-D / 3-D window op", "Report this as a bug.")
        }
    }

    /// Refuses conv3d / pool3d / deconv3d (true) before their rank-5 NDHWC input is taken for TimeDistributed
    /// frames; false for other ops.
    mutating func refuseVolumetric(_ node: Node) -> Bool {
        switch node.op {
        case .conv3d, .pool3d, .deconv3d:
            fail(node, "\(node.op.name) needs Core ML's convolution3d / pooling3d layers (specification 5, rank-5 NCDHW blobs), "
                 + "which the classic-layer writer does not emit (its blobs are [C, H, W])",
                 "Keep the model in .mlbundle, or export an ML Program with coremltools (MIL conv / max_pool / avg_pool are rank-generic).")
            return true
        default:
            return false
        }
    }

    /// The `PaddingMode` of a 1-D rule on the H axis of a [C, W, 1] blob (nil for another rank).
    static func onHeight(_ p: SpatialPadding) -> PaddingMode? {
        switch p {
        case .valid: return .valid
        case .same: return .same
        case let .explicit(b, a): return b.count == 1 && a.count == 1 ? .explicit(top: b[0], bottom: a[0], left: 0, right: 0) : nil
        }
    }
}
