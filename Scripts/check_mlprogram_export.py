#!/usr/bin/env python3
"""Checks ML programs written by mlconv against coremltools 8.3 and records the results in
Fixtures/mlprogram_export/coremltools_check.json (read by MLProgramExportCompressionTests).

1. Export: for each Keras fixture below, `mlconv keras F.h5 -o F.mlpackage` (fp32 and fp16);
   coremltools loads each package (`MLModel(path, skip_model_load=True)`) and converts its
   spec back to a pymil program (`milproto.load`), which type-checks every op against the MIL
   op definitions of its opset.
   Classifier packages (`--class-labels`, CLASSIFIERS) are loaded the same way; the last op must be
   `classify` with the labels, and the description must name the label and probability outputs.
2. Compression: for the fp32 package of COMPRESS_FIXTURE, coremltools.optimize.coreml compresses
   it (linear_symmetric int8 per channel, palettize 4-bit kmeans, palettize 4-bit uniform, magnitude
   pruning 0.5) and `mlconv quantize` does the same; both outputs are decoded by coremltools
   (constexpr ops materialised by pymil) and compared with the original weights: SQNR per tensor.

Run: PY=$(Scripts/coremltools8-env); $PY Scripts/check_mlprogram_export.py [path/to/mlconv]
"""
import json, os, subprocess, sys, tempfile
import numpy as np
import coremltools as ct
import coremltools.optimize.coreml as cto
from coremltools.converters.mil.frontend.milproto.load import load as milproto_load

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MLCONV = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build/debug/mlconv")
FIXTURES = ["fer_cnn_k2", "sketch_cnn_k2", "depthwise_separable_k2", "conv2d_variants_k2", "pooling_k2",
            "merge_ops_k2", "flatten_dense_k2", "small_unet_k2", "tiny_yolo_k2", "multi_io_k2", "rescaling_k2",
            "batchnorm_variants_k2", "activations_k2", "norm_layers_k2", "pad_crop_upsample_k2", "reshape_permute_repeat_k2",
            "style_transfer_k2", "conv1d_causal_dilated_k2", "lambda_calls_k2",
            # issue 11: conv_transpose (2-D, 1-D), rnn / lstm (forward, go_backwards, bidirectional), TimeDistributed LSTM
            "conv_transpose_k2", "conv1d_transpose_k2", "simple_rnn_k2", "lstm_variants_k2", "quickdraw_rnn_k2",
            "time_distributed_k2", "conv_lstm1d_k2"]
# issue 11: classifier packages (`--class-labels`): coremltools must read the classify op and the
# description's predictedFeatureName / predictedProbabilitiesName.
CLASSIFIERS = {"fer_cnn_k2": ["angry", "disgust", "fear", "happy", "sad", "surprise", "neutral"]}
COMPRESS_FIXTURE = "fer_cnn_k2"
MODES = {
    # key: (mlconv quantize options, coremltools function, config); "_ios18" keys start from an
    # --target iOS18 package (coremltools then writes the iOS18 ops too).
    "linear_int8_ios18": (["--linear-symmetric"], cto.linear_quantize_weights,
                          cto.OptimizationConfig(global_config=cto.OpLinearQuantizerConfig(mode="linear_symmetric", dtype="int8"))),
    "linear_int4_block32_ios18": (["--linear-symmetric", "--bits", "4", "--block-size", "32"], cto.linear_quantize_weights,
                                  cto.OptimizationConfig(global_config=cto.OpLinearQuantizerConfig(
                                      mode="linear_symmetric", dtype="int4", granularity="per_block", block_size=32))),
    "palettize4_kmeans_ios18": (["--palettize", "4"], cto.palettize_weights,
                                cto.OptimizationConfig(global_config=cto.OpPalettizerConfig(nbits=4, mode="kmeans"))),
    "palettize4_kmeans_group16_ios18": (["--palettize", "4", "--group-size", "16"], cto.palettize_weights,
                                        cto.OptimizationConfig(global_config=cto.OpPalettizerConfig(
                                            nbits=4, mode="kmeans", granularity="per_grouped_channel", group_size=16))),
    "palettize2_uniform_ios18": (["--palettize", "2", "--palettize-mode", "uniform"], cto.palettize_weights,
                                 cto.OptimizationConfig(global_config=cto.OpPalettizerConfig(nbits=2, mode="uniform"))),
    "prune_2of4_ios18": (["--prune", "2:4"], cto.prune_weights,
                         cto.OptimizationConfig(global_config=cto.OpMagnitudePrunerConfig(n_m_ratio=(2, 4)))),
    "prune_magnitude_0.75_ios18": (["--prune", "magnitude", "--sparsity", "0.75"], cto.prune_weights,
                                   cto.OptimizationConfig(global_config=cto.OpMagnitudePrunerConfig(target_sparsity=0.75))),
    "linear_int8": (["--linear-symmetric"], cto.linear_quantize_weights,
                    cto.OptimizationConfig(global_config=cto.OpLinearQuantizerConfig(mode="linear_symmetric", dtype="int8"))),
    "palettize4_kmeans": (["--palettize", "4"], cto.palettize_weights,
                          cto.OptimizationConfig(global_config=cto.OpPalettizerConfig(nbits=4, mode="kmeans"))),
    "palettize4_uniform": (["--palettize", "4", "--palettize-mode", "uniform"], cto.palettize_weights,
                           cto.OptimizationConfig(global_config=cto.OpPalettizerConfig(nbits=4, mode="uniform"))),
    "prune_magnitude_0.5": (["--prune", "magnitude", "--sparsity", "0.5"], cto.prune_weights,
                            cto.OptimizationConfig(global_config=cto.OpMagnitudePrunerConfig(target_sparsity=0.5))),
}


def program(path):
    spec = ct.models.MLModel(path, skip_model_load=True).get_spec()
    return spec, milproto_load(spec, spec.specificationVersion, os.path.join(path, "Data/com.apple.CoreML/weights"))


def weights(prog):
    """name of the original const → dense values (constexpr outputs are named <const>_<suffix>)."""
    out = {}
    for op in prog.functions["main"].operations:
        if op.op_type == "const" and op.outputs[0].val is not None and np.asarray(op.outputs[0].val).size > 2048:
            out[op.outputs[0].name] = np.asarray(op.outputs[0].val, np.float64)
        elif op.op_type.startswith("constexpr_"):
            v = op.materialized_val_inference()
            name = op.outputs[0].name.rsplit("_", 1)[0]
            out[name] = np.asarray(v, np.float64)
    return out


def sqnr(w, r):
    """dB; None when the reconstruction is exact (the tensor was left uncompressed)."""
    n = np.sum((w - r) ** 2)
    return None if n == 0 else float(10 * np.log10(np.sum(w ** 2) / n))


def run(cmd):
    subprocess.run(cmd, check=True, capture_output=True)


result = {"coremltools": ct.__version__, "exports": [], "compression": {"fixture": COMPRESS_FIXTURE, "modes": {}}}
with tempfile.TemporaryDirectory() as tmp:
    for name in FIXTURES:
        for prec in ["fp32", "fp16"]:
            pkg = os.path.join(tmp, f"{name}_{prec}.mlpackage")
            run([MLCONV, "keras", os.path.join(ROOT, "Fixtures/keras", name, "model.h5"), "-o", pkg, "--precision", prec])
            spec, prog = program(pkg)
            ops = [op.op_type for op in prog.functions["main"].operations]
            result["exports"].append({"fixture": name, "precision": prec, "loaded": True,
                                      "specificationVersion": spec.specificationVersion,
                                      "opset": prog.functions["main"].opset_version.name if hasattr(prog.functions["main"], "opset_version") and prog.functions["main"].opset_version else None,
                                      "ops": len(ops)})
            print("export", name, prec, "loaded,", len(ops), "ops")
    result["classifiers"] = []
    for name, labels in CLASSIFIERS.items():
        label_file = os.path.join(tmp, f"{name}_labels.txt")
        open(label_file, "w").write("\n".join(labels) + "\n")
        for prec in ["fp32", "fp16"]:
            pkg = os.path.join(tmp, f"{name}_classifier_{prec}.mlpackage")
            run([MLCONV, "keras", os.path.join(ROOT, "Fixtures/keras", name, "model.h5"), "-o", pkg, "--precision", prec,
                 "--class-labels", label_file])
            spec, prog = program(pkg)
            last = prog.functions["main"].operations[-1]
            classes = [str(c) for c in last.inputs["classes"].val] if last.op_type == "classify" else None
            outputs = {o.name: o.type.WhichOneof("Type") for o in spec.description.output}
            result["classifiers"].append({"fixture": name, "precision": prec, "loaded": True, "last_op": last.op_type,
                                          "classes_match": classes == labels,
                                          "predictedFeatureName": spec.description.predictedFeatureName,
                                          "predictedProbabilitiesName": spec.description.predictedProbabilitiesName,
                                          "output_types": outputs})
            print("classifier", name, prec, result["classifiers"][-1])
    sources = {}
    for target in ["iOS15", "iOS18"]:
        sources[target] = os.path.join(tmp, f"src_{target}.mlpackage")
        run([MLCONV, "keras", os.path.join(ROOT, "Fixtures/keras", COMPRESS_FIXTURE, "model.h5"), "-o", sources[target],
             "--precision", "fp32", "--target", target])
    _, src_prog = program(sources["iOS15"])
    original = weights(src_prog)
    for mode, (args, fn, cfg) in MODES.items():
        src = sources["iOS18" if mode.endswith("_ios18") else "iOS15"]
        theirs = os.path.join(tmp, f"ct_{mode}.mlpackage")
        fn(ct.models.MLModel(src, skip_model_load=True), cfg).save(theirs)
        ours = os.path.join(tmp, f"ours_{mode}.mlpackage")
        run([MLCONV, "quantize", src, "-o", ours] + args)
        t_spec, t_prog = program(theirs)
        o_spec, o_prog = program(ours)
        t_w, o_w = weights(t_prog), weights(o_prog)
        rows = []
        for k, w in sorted(original.items()):
            rows.append({"weight": k, "shape": list(w.shape), "elements": int(w.size),
                         "sqnr_coremltools": sqnr(w, t_w[k]) if k in t_w else None,
                         "sqnr_mlconv_decoded_by_coremltools": sqnr(w, o_w[k]) if k in o_w else None})
            print(mode, rows[-1])
        result["compression"]["modes"][mode] = {
            "mlconv_args": args, "source_target": "iOS18" if mode.endswith("_ios18") else "iOS15", "specificationVersion_coremltools": t_spec.specificationVersion,
            "specificationVersion_mlconv": o_spec.specificationVersion, "weights": rows}
out = os.path.join(ROOT, "Fixtures/mlprogram_export/coremltools_check.json")
json.dump(result, open(out, "w"), indent=1, allow_nan=True)
print("wrote", out)
