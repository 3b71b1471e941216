// convolution3d, pooling3d and globalPooling3d (NeuralNetwork.proto, specification 5): rank-5
// blobs [B, C, D, H, W] in EXACT networks. convolution3d and pooling3d run as the IR's NDHWC
// conv3d / pool3d between transposes; globalPooling3d is a reduction over D, H, W.
import MLGraph

extension LayerImporter {
    /// Dispatches the 3-D layers; nil for other layer types.
    func convert3D(_ layer: Spec.NeuralNetworkLayer, _ ins: [String]) throws -> [String]? {
        guard case let .other(params) = layer.layer else { return nil }
        let name = layer.name, out = layer.output.first ?? name
        switch params {
        case let .convolution3d(p): return [try convolution3d(p, ins, name: name, out: out)]
        case let .pooling3d(p): return [try pooling3d(p, ins, name: name, out: out)]
        case let .globalPooling3d(p):
            guard ins.count == 1, b.shape(ins[0]).count == 5 else { throw LayerImportFailure("globalPooling3d takes one rank-5 blob [B, C, D, H, W]") }
            let f: ReduceFunction = p.type == .max ? .max : .mean
            return [try b.emit(name, .reduce(ReduceAttributes(function: f, axes: [2, 3, 4], keepDims: true)), ins, output: out)]
        default: return nil
        }
    }

    private func ndhwc(_ ins: [String], name: String, what: String) throws -> String {
        guard ins.count == 1, b.shape(ins[0]).count == 5 else {
            throw LayerImportFailure("\(what) takes one rank-5 blob [B, C, D, H, W], found \(ins.map { b.shape($0) })")
        }
        return try b.emit(name + "__to_ndhwc", .transpose(perm: [0, 2, 3, 4, 1]), ins)
    }

    private func ncdhw(_ t: String, name: String, out: String) throws -> String {
        try b.emit(name + "__to_ncdhw", .transpose(perm: [0, 4, 1, 2, 3]), [t], output: out)
    }

    private func positive(_ v: [Int32], _ what: String) throws -> [Int] {
        let r = try v.map { try Checked.int($0, what, in: 1...Node.maxWindowAttribute) }
        return r
    }

    private func convolution3d(_ p: Spec.Convolution3DLayerParams, _ ins: [String], name: String, out: String) throws -> String {
        guard !p.isDeconvolution else { throw LayerImportFailure("convolution3d with isDeconvolution is not imported yet (the IR's deconv3d differs in its output-shape rules)") }
        let x = try ndhwc(ins, name: name, what: "convolution3d")
        let cin = b.shape(ins[0])[1]
        let k = try positive([p.kernelDepth, p.kernelHeight, p.kernelWidth], "kernel size")
        let s = try positive([Swift.max(1, p.strideDepth), Swift.max(1, p.strideHeight), Swift.max(1, p.strideWidth)], "stride")
        let d = try positive([Swift.max(1, p.dilationDepth), Swift.max(1, p.dilationHeight), Swift.max(1, p.dilationWidth)], "dilation")
        let groups = Swift.max(1, try Checked.int(p.nGroups, "nGroups", in: 0...Node.maxCountAttribute))
        let cout = try Checked.int(p.outputChannels, "outputChannels", in: 1...Node.maxCountAttribute)
        guard cin % groups == 0, p.inputChannels == 0 || Int(p.inputChannels) == cin else {
            throw LayerImportFailure("has inputChannels \(p.inputChannels), nGroups \(groups) but its input has \(cin) channels")
        }
        var w: [String: ConstantTensor] = ["weight": try WeightImport.constant(p.weights, shape: [cout, cin / groups] + k, axis: 0, what: "weight")]
        if p.hasBias { w["bias"] = try WeightImport.constant(p.bias, shape: [cout], what: "bias") }
        let padding: SpatialPadding
        switch p.paddingType {
        case .valid: padding = .valid
        case .same: padding = .same
        default:
            let pads = try [p.customPaddingFront, p.customPaddingBack, p.customPaddingTop, p.customPaddingBottom, p.customPaddingLeft, p.customPaddingRight]
                .map { try Checked.int($0, "custom padding", in: 0...Node.maxWindowAttribute) }
            padding = .explicit(before: [pads[0], pads[2], pads[4]], after: [pads[1], pads[3], pads[5]])
        }
        let y = try b.emit(name, .conv3d(ConvNDAttributes(kernel: k, strides: s, dilations: d, padding: padding, groups: groups, outputChannels: cout)),
                           [x], weights: w)
        return try ncdhw(y, name: name, out: out)
    }

    private func pooling3d(_ p: Spec.Pooling3DLayerParams, _ ins: [String], name: String, out: String) throws -> String {
        var x = try ndhwc(ins, name: name, what: "pooling3d")
        let k = try positive([p.kernelDepth, p.kernelHeight, p.kernelWidth], "kernel size")
        let s = try positive([Swift.max(1, p.strideDepth), Swift.max(1, p.strideHeight), Swift.max(1, p.strideWidth)], "stride")
        let kind: PoolKind = p.type == .max ? .max : .average
        var padding: SpatialPadding
        switch p.paddingType {
        case .valid: padding = .valid
        case .same: padding = .same
        default:
            let pads = try [p.customPaddingFront, p.customPaddingBack, p.customPaddingTop, p.customPaddingBottom, p.customPaddingLeft, p.customPaddingRight]
                .map { try Checked.int($0, "custom padding", in: 0...Node.maxWindowAttribute) }
            padding = .explicit(before: [pads[0], pads[2], pads[4]], after: [pads[1], pads[3], pads[5]])
        }
        if kind == .average && !p.countExcludePadding && padding != .valid {
            // Core ML counts the padded zeros in the average: pad explicitly, then pool without padding.
            let sp = Array(b.shape(x)[1...3])
            let r = padding.resolve(input: sp, kernel: k, strides: s, dilations: [1, 1, 1])
            if r.contains(where: { $0.before != 0 || $0.after != 0 }) {
                x = try b.emit(name + "__pad", .pad(PadAttributes(mode: .constant, pads: [[0, 0]] + r.map { [$0.before, $0.after] } + [[0, 0]])), [x])
            }
            padding = .valid
        }
        let y = try b.emit(name, .pool3d(PoolNDAttributes(kind: kind, kernel: k, strides: s, padding: padding)), [x])
        return try ncdhw(y, name: name, out: out)
    }
}
