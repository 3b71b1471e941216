#!/usr/bin/env python3
"""Checks mlconv's Core ML schema and codec against coremltools' own protobuf classes.

Python is only used here (and never by `swift build` / `swift test`). Set-up, once:

    python3 -m venv /opt/ctvenv
    /opt/ctvenv/bin/pip install "coremltools==7.2" "protobuf==3.20.3" "numpy<2"

Run everything (from the repository root):

    /opt/ctvenv/bin/python Scripts/check_proto_roundtrip.py all [--corpus ../shared/corpus/mlmodel]

or step by step:

    PY=/opt/ctvenv/bin/python; DIR=$(mktemp -d)
    $PY Scripts/check_proto_roundtrip.py schema            # 1. our .proto vs coremltools' descriptors
    $PY Scripts/check_proto_roundtrip.py make $DIR          # 2. models built by NeuralNetworkBuilder
    MLCONV_ROUNDTRIP_DIR=$DIR swift test --scratch-path /tmp/build-coreml \\
        --filter CoreMLFormatTests.CoremltoolsRoundTripTests  # 3. our decoder + encoder
    $PY Scripts/check_proto_roundtrip.py compare $DIR       # 4. coremltools parses our output

Step 1 compiles Sources/CoreMLFormat/proto/*.proto with `protoc-c --descriptor_set_out` and
compares every message, field (number, name, type, label, oneof) and enum value we declare with
coremltools' Model_pb2 descriptors. Messages we keep empty on purpose (model kinds recognised
by name only) are listed, not flagged.

Step 3 (a Swift test, skipped unless MLCONV_ROUNDTRIP_DIR is set) decodes every X.mlmodel in
the directory, writes X.roundtrip.mlmodel with our encoder, and writes swift_*.mlmodel built
in Swift.

Step 4 parses each X.mlmodel / X.roundtrip.mlmodel pair with coremltools' classes and requires
equal MessageToDict output (and reports byte identity); it parses the swift_*.mlmodel files with
both coremltools' schema and ours and requires identical dictionaries, and checks that the
layer type coremltools sees is the one named in each Swift-built layer's name.
Exit status is 0 only if every check passes.
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROTO_DIR = os.path.join(ROOT, "Sources", "CoreMLFormat", "proto")


def apple_model_class():
    from coremltools.proto import Model_pb2
    return Model_pb2.Model


def our_descriptor_set(out_path):
    protos = sorted(glob.glob(os.path.join(PROTO_DIR, "*.proto")))
    subprocess.check_call(["protoc-c", "--proto_path=" + PROTO_DIR, "--include_imports",
                           "--descriptor_set_out=" + out_path] + protos)
    from google.protobuf import descriptor_pb2
    fds = descriptor_pb2.FileDescriptorSet()
    with open(out_path, "rb") as f:
        fds.ParseFromString(f.read())
    return fds


def our_model_class(tmpdir):
    from google.protobuf import descriptor_pool, message_factory
    fds = our_descriptor_set(os.path.join(tmpdir, "ours.pb"))
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)
    desc = pool.FindMessageTypeByName("CoreML.Specification.Model")
    return message_factory.MessageFactory(pool).GetPrototype(desc)


# ---------------------------------------------------------------------------------------------
# 1. schema

# Spec 9 additions (coremltools >= 8) that coremltools 7.2 does not have. With an older
# coremltools they are reported as notes; with a newer one they are compared like the rest.
NEWER_THAN_CT7 = {
    "CoreML.Specification.StateFeatureType",
    "CoreML.Specification.FunctionDescription",
    "CoreML.Specification.FeatureType.stateType",
    "CoreML.Specification.ModelDescription.state",
    "CoreML.Specification.ModelDescription.functions",
    "CoreML.Specification.ModelDescription.defaultFunctionName",
    "CoreML.Specification.MILSpec.StateType",
    "CoreML.Specification.MILSpec.ValueType.stateType",
    *(f"CoreML.Specification.MILSpec.DataType.{v}" for v in
      ("FLOAT8E4M3FN", "FLOAT8E5M2", "INT4", "UINT4", "UINT2", "UINT1", "UINT6", "UINT3")),
}

# Messages kept empty on purpose: model kinds mlconv recognises by name only (their content is
# re-encoded verbatim). Any other empty message whose coremltools counterpart has fields fails.
INTENTIONALLY_EMPTY = {
    "CoreML.Specification.CoreMLModels.TextClassifier",
    "CoreML.Specification.CoreMLModels.WordTagger",
    "CoreML.Specification.CoreMLModels.VisionFeaturePrint",
    "CoreML.Specification.CoreMLModels.SoundAnalysisPreprocessing",
    "CoreML.Specification.CoreMLModels.Gazetteer",
    "CoreML.Specification.CoreMLModels.WordEmbedding",
    "CoreML.Specification.CoreMLModels.AudioFeaturePrint",
    "CoreML.Specification.CustomModel",
    "CoreML.Specification.LinkedModel",
}

# Files whose messages must declare every field and enum value coremltools has (the classical
# model kinds, whose Swift types Scripts/gen-swift-spec generates). Other files are subsets.
COMPLETE_FILES = {"OtherModels.proto", "DataStructures.proto", "Parameters.proto", "NeuralNetwork.proto",
                  "MIL.proto"}


def cmd_schema(_args):
    from google.protobuf import descriptor_pb2
    from google.protobuf.descriptor import FieldDescriptor as FD
    apple_pool = apple_model_class().DESCRIPTOR.file.pool
    type_names = {v: k for k, v in descriptor_pb2.FieldDescriptorProto.Type.items()}
    apple_type = {getattr(FD, n): n for n in dir(FD) if n.startswith("TYPE_")}
    label_names = {1: "LABEL_OPTIONAL", 2: "LABEL_REQUIRED", 3: "LABEL_REPEATED"}
    errors, notes = [], []
    import coremltools
    old_ct = int(coremltools.__version__.split(".")[0]) < 8

    def missing_in_ct(name, text):
        if old_ct and name in NEWER_THAN_CT7:
            notes.append(f"{text} (added in coremltools 8; this is coremltools {coremltools.__version__})")
        else:
            errors.append(text)
    counts = {"messages": 0, "fields": 0, "enums": 0}

    with tempfile.TemporaryDirectory() as tmp:
        fds = our_descriptor_set(os.path.join(tmp, "ours.pb"))

    def check_enum(full, e, complete=False):
        counts["enums"] += 1
        try:
            ae = apple_pool.FindEnumTypeByName(full)
        except KeyError:
            errors.append(f"enum {full}: not in coremltools")
            return
        apple_values = {v.name: v.number for v in ae.values}
        for v in e.value:
            if v.name not in apple_values:
                missing_in_ct(f"{full}.{v.name}", f"enum {full}.{v.name}: not in coremltools")
            elif apple_values[v.name] != v.number:
                errors.append(f"enum {full}.{v.name} = {v.number}, coremltools has {apple_values[v.name]}")
        missing = set(apple_values) - {v.name for v in e.value}
        if missing:
            (errors if complete else notes).append(f"enum {full}: values not declared by us: {sorted(missing)}")

    def check_message(full, m, complete=False):
        counts["messages"] += 1
        try:
            am = apple_pool.FindMessageTypeByName(full)
        except KeyError:
            if m.options.map_entry:
                return  # our map entry names follow protoc's rule; coremltools' may differ
            missing_in_ct(full, f"message {full}: not in coremltools")
            return
        apple_fields = {f.number: f for f in am.fields}
        for f in m.field:
            counts["fields"] += 1
            where = f"{full}.{f.name} (field {f.number})"
            af = apple_fields.get(f.number)
            if af is None:
                missing_in_ct(f"{full}.{f.name}", f"{where}: coremltools has no field {f.number}")
                continue
            if af.name != f.name:
                errors.append(f"{where}: coremltools names field {f.number} '{af.name}'")
            if apple_type[af.type] != type_names[f.type]:
                errors.append(f"{where}: type {type_names[f.type]}, coremltools {apple_type[af.type]}")
            if label_names[af.label] != descriptor_pb2.FieldDescriptorProto.Label.Name(f.label):
                errors.append(f"{where}: label differs from coremltools")
            if f.type_name:
                ours = f.type_name.lstrip(".")
                theirs = (af.message_type or af.enum_type).full_name
                if ours != theirs and not (af.message_type and af.message_type.GetOptions().map_entry):
                    errors.append(f"{where}: type {ours}, coremltools {theirs}")
            our_oneof = m.oneof_decl[f.oneof_index].name if f.HasField("oneof_index") else None
            their_oneof = af.containing_oneof.name if af.containing_oneof else None
            if our_oneof != their_oneof:
                errors.append(f"{where}: oneof {our_oneof}, coremltools {their_oneof}")
        declared = {f.number for f in m.field}
        missing = sorted(n for n in apple_fields if n not in declared)
        if missing:
            what = ", ".join(f"{apple_fields[n].name}={n}" for n in missing)
            kind = "kept verbatim (recognised by name only)" if not m.field else "not declared by us"
            if len(missing) > 12:
                what = ", ".join(f"{apple_fields[n].name}={n}" for n in missing[:12]) + f", … ({len(missing)} in all)"
            if not m.field and full not in INTENTIONALLY_EMPTY:
                errors.append(f"{full}: empty, but not listed in INTENTIONALLY_EMPTY: {what}")
            elif complete and full not in INTENTIONALLY_EMPTY:
                errors.append(f"{full}: {kind} (this file must be complete): {what}")
            else:
                notes.append(f"{full}: {kind}: {what}")
        for e in m.enum_type:
            check_enum(f"{full}.{e.name}", e, complete)
        for n in m.nested_type:
            check_message(f"{full}.{n.name}", n, complete)

    for fd in fds.file:
        complete = os.path.basename(fd.name) in COMPLETE_FILES
        for e in fd.enum_type:
            check_enum(f"{fd.package}.{e.name}", e, complete)
        for m in fd.message_type:
            check_message(f"{fd.package}.{m.name}", m, complete)

    for n in notes:
        print("note:", n)
    print(f"schema: {counts['messages']} messages, {counts['fields']} fields, {counts['enums']} enums compared "
          f"with coremltools' descriptors; {len(errors)} mismatch(es)")
    for e in errors:
        print("MISMATCH:", e)
    return not errors


# ---------------------------------------------------------------------------------------------
# 2. make

def cmd_make(args):
    import numpy as np
    import coremltools as ct
    from coremltools.models import datatypes
    from coremltools.models.neural_network import NeuralNetworkBuilder

    os.makedirs(args.dir, exist_ok=True)
    rng = np.random.default_rng(0)
    C, H, W = 3, 8, 8
    b = NeuralNetworkBuilder([("image", datatypes.Array(C, H, W))], [("probs", datatypes.Array(4))],
                             disable_rank5_shape_mapping=False)
    b.add_convolution("conv", kernel_channels=C, output_channels=4, height=3, width=3, stride_height=1,
                      stride_width=1, border_mode="same", groups=1, W=rng.standard_normal((3, 3, C, 4)).astype(np.float32),
                      b=rng.standard_normal(4).astype(np.float32), has_bias=True, input_name="image", output_name="c1")
    b.add_batchnorm("bn", 4, gamma=np.ones(4), beta=np.zeros(4), mean=np.zeros(4), variance=np.ones(4),
                    input_name="c1", output_name="bn", epsilon=1e-3)
    prev = "bn"
    for i, (act, params) in enumerate([("RELU", None), ("LEAKYRELU", [0.2]), ("PRELU", np.full(4, 0.1)),
                                       ("ELU", 1.0), ("SIGMOID_HARD", [0.2, 0.5]),
                                       ("PARAMETRICSOFTPLUS", [np.ones(4), np.ones(4)]), ("SCALED_TANH", [1.7, 0.6]),
                                       ("LINEAR", [2.0, 1.0]), ("THRESHOLDEDRELU", 1.0), ("SOFTSIGN", None),
                                       ("SOFTPLUS", None), ("TANH", None), ("SIGMOID", None)]):
        b.add_activation(f"act{i}_{act.lower()}", act, prev, f"a{i}", params=params)
        prev = f"a{i}"
    b.add_padding("pad", left=1, right=1, top=1, bottom=1, padding_type="reflection", input_name=prev, output_name="pad")
    b.add_pooling("pool", height=2, width=2, stride_height=2, stride_width=2, layer_type="MAX",
                  padding_type="VALID", input_name="pad", output_name="pool")
    b.add_upsample("up", 2, 2, "pool", "up", mode="BILINEAR")
    b.add_elementwise("add", ["up", "up"], "added", mode="ADD")
    b.add_elementwise("mul", ["added", "up"], "mul", mode="MULTIPLY", alpha=None)
    b.add_unary("unary", "mul", "unary", mode="abs")
    b.add_l2_normalize("l2", "unary", "l2", epsilon=1e-6)
    b.add_lrn("lrn", "l2", "lrn", alpha=1e-4, beta=0.75, local_size=3, k=2.0)
    b.add_mvn("mvn", "lrn", "mvn", across_channels=True, normalize_variance=True, epsilon=1e-5)
    b.add_crop("crop", left=1, right=1, top=1, bottom=1, offset=[0, 0], input_names=["mvn"], output_name="crop")
    b.add_slice("slice", "crop", "slice", axis="channel", start_index=0, end_index=4, stride=1)
    b.add_reduce("reduce", "slice", "reduce", axis="HW", mode="avg")
    b.add_scale("scale", W=np.full(4, 2.0), b=np.zeros(4), has_bias=True, input_name="reduce", output_name="scaled",
                shape_scale=[4], shape_bias=[4])
    b.add_bias("bias", b=np.ones(4), input_name="scaled", output_name="biased", shape_bias=[4])
    b.add_flatten("flatten", mode=1, input_name="biased", output_name="flat")
    b.add_inner_product("fc", W=rng.standard_normal((4, 4)).astype(np.float32), b=np.zeros(4, np.float32),
                        input_channels=4, output_channels=4, has_bias=True, input_name="flat", output_name="fc")
    b.add_reshape("reshape", "fc", "reshaped", target_shape=(4, 1, 1), mode=0)
    b.add_permute("permute", dim=(0, 1, 2, 3), input_name="reshaped", output_name="permuted")
    b.add_split("split", "permuted", ["s1", "s2"])
    b.add_elementwise("concat", ["s1", "s2"], "concat", mode="CONCAT")
    b.add_softmax("softmax", "concat", "sm")
    from coremltools.proto import NeuralNetwork_pb2
    custom = NeuralNetwork_pb2.CustomLayerParams()
    custom.className = "MyLayer"
    custom.description = "a custom layer"
    custom.parameters["scale"].doubleValue = 0.5
    custom.parameters["name"].stringValue = "x"
    custom.parameters["n"].intValue = 3
    custom.parameters["big"].longValue = 1 << 40
    custom.parameters["on"].boolValue = True
    w = custom.weights.add()
    w.floatValue.extend([1.0, 2.0])
    b.add_custom("custom", ["sm"], ["probs"], custom_proto_spec=custom)
    b.spec.description.metadata.author = "check_proto_roundtrip.py"
    b.spec.description.metadata.userDefined["k"] = "v"
    spec = b.spec
    path = os.path.join(args.dir, "builder_nn.mlmodel")
    with open(path, "wb") as f:
        f.write(spec.SerializeToString())
    print("wrote", path)

    # The same network with fp16 and 8-bit linear weights (spec-level quantization works on Linux).
    from coremltools.models.neural_network import quantization_utils as qu
    for nbits, mode, name in [(16, "_linear_quantization", "builder_fp16"),
                              (8, "_linear_quantization", "builder_q8"),
                              (4, "_lookup_table_quantization_linear", "builder_lut4")]:
        try:
            q = qu._quantize_spec_weights(ct.proto.Model_pb2.Model.FromString(spec.SerializeToString()), nbits, mode)
            p = os.path.join(args.dir, name + ".mlmodel")
            with open(p, "wb") as f:
                f.write(q.SerializeToString())
            print("wrote", p)
        except Exception as e:  # keep going: the float model is the main one
            print(f"note: could not write {name}: {e}")

    # LSTM / GRU / embedding model.
    b2 = NeuralNetworkBuilder([("seq", datatypes.Array(4))], [("out", datatypes.Array(3))])
    n_in, n_h = 4, 3
    mats = lambda r, c: [rng.standard_normal((r, c)).astype(np.float32) for _ in range(4)]
    b2.add_unilstm("lstm", W_h=mats(n_h, n_h), W_x=mats(n_h, n_in), b=[np.zeros(n_h)] * 4, hidden_size=n_h,
                   input_size=n_in, input_names=["seq"], output_names=["h1", "h1_out", "c1_out"],
                   output_all=True, forget_bias=True, peep=[np.zeros(n_h)] * 3, cell_clip_threshold=50.0)
    b2.add_gru("gru", W_h=mats(n_h, n_h)[:3], W_x=mats(n_h, n_h)[:3], b=[np.zeros(n_h)] * 3, hidden_size=n_h,
               input_size=n_h, input_names=["h1"], output_names=["g1", "g1_out"], output_all=True)
    b2.add_simple_rnn("rnn", W_h=mats(n_h, n_h)[0], W_x=mats(n_h, n_h)[0], b=np.zeros(n_h), hidden_size=n_h,
                      input_size=n_h, activation="TANH", input_names=["g1"], output_names=["r1", "r1_out"],
                      output_all=False)
    b2.add_bidirlstm("bilstm", W_h=mats(n_h, n_h), W_x=mats(n_h, n_h), b=[np.zeros(n_h)] * 4, W_h_back=mats(n_h, n_h),
                     W_x_back=mats(n_h, n_h), b_back=[np.zeros(n_h)] * 4, hidden_size=n_h, input_size=n_h,
                     input_names=["r1"], output_names=["bi", "f_h", "f_c", "b_h", "b_c"], output_all=False)
    b2.add_embedding("embed", W=rng.standard_normal((3, 6)).astype(np.float32), b=None, input_dim=6, output_channels=3,
                     has_bias=False, input_name="bi", output_name="out")
    path = os.path.join(args.dir, "builder_rnn.mlmodel")
    with open(path, "wb") as f:
        f.write(b2.spec.SerializeToString())
    print("wrote", path)

    if args.corpus:
        for src in sorted(glob.glob(os.path.join(args.corpus, "*.mlmodel"))):
            shutil.copy(src, os.path.join(args.dir, "corpus_" + os.path.basename(src)))
        print("copied corpus models from", args.corpus)
    return True


# ---------------------------------------------------------------------------------------------
# 4. compare

def cmd_compare(args):
    from google.protobuf.json_format import MessageToDict
    Apple = apple_model_class()
    ok = True
    pairs = 0
    for src in sorted(glob.glob(os.path.join(args.dir, "*.mlmodel"))):
        base = os.path.basename(src)
        if base.endswith(".roundtrip.mlmodel") or base.startswith("swift_"):
            continue
        rt = src[: -len(".mlmodel")] + ".roundtrip.mlmodel"
        with open(src, "rb") as f:
            a_bytes = f.read()
        try:
            a = Apple.FromString(a_bytes)
        except Exception as e:
            print(f"{base}: coremltools cannot parse the source either ({type(e).__name__}); skipped")
            continue
        if not os.path.exists(rt):
            print(f"FAIL {base}: no {os.path.basename(rt)} (did the Swift step run?)")
            ok = False
            continue
        with open(rt, "rb") as f:
            b_bytes = f.read()
        b = Apple.FromString(b_bytes)
        pairs += 1
        same = MessageToDict(a) == MessageToDict(b)
        ok &= same
        print(f"{'ok  ' if same else 'FAIL'} {base}: coremltools sees "
              f"{'the same model' if same else 'DIFFERENT models'} after our decode+encode; "
              f"bytes {'identical' if a_bytes == b_bytes else 'differ'} ({len(a_bytes)} / {len(b_bytes)})")

    with tempfile.TemporaryDirectory() as tmp:
        Ours = our_model_class(tmp)
    for path in sorted(glob.glob(os.path.join(args.dir, "swift_*.mlmodel"))):
        base = os.path.basename(path)
        with open(path, "rb") as f:
            data = f.read()
        try:
            a = Apple.FromString(data)
            o = Ours.FromString(data)
        except Exception as e:
            print(f"FAIL {base}: cannot be parsed: {type(e).__name__}: {e}")
            ok = False
            continue
        same = MessageToDict(a) == MessageToDict(o)
        if a.WhichOneof("Type") in ("pipeline", "pipelineClassifier", "pipelineRegressor"):
            # Our schema keeps opaque stages (e.g. glmRegressor) as unknown fields, which
            # MessageToDict omits: compare the stage kinds and coremltools' view instead.
            same = [m.WhichOneof("Type") for m in _stages(a)] == [m.WhichOneof("Type") for m in _stages(o)]
        problems = [] if same else ["coremltools' and our schema read different values"]
        nn = None
        for kind in ("neuralNetwork", "neuralNetworkClassifier", "neuralNetworkRegressor"):
            if a.WhichOneof("Type") == kind:
                nn = getattr(a, kind)
        layers = list(nn.layers) if nn is not None else []
        for layer in layers:
            # Swift names its sample layers "layer<i>_<Apple layer type name>".
            expected = layer.name.split("_", 1)[1] if "_" in layer.name else None
            got = layer.WhichOneof("layer")
            if expected and expected != got:
                problems.append(f"layer {layer.name}: coremltools sees {got}")
            if layer.UnknownFields() if hasattr(layer, "UnknownFields") else False:
                problems.append(f"layer {layer.name}: unknown fields for coremltools")
        ok &= not problems
        if base == "swift_pipeline.mlmodel":
            glm = _stages(a)[1].glmRegressor if len(_stages(a)) > 1 else None
            if glm is None or [list(v.value) for v in glm.weights] != [[1.0]] or list(glm.offset) != [2.0]:
                problems.append(f"opaque glmRegressor stage not preserved: {glm}")
        print(f"{'ok  ' if not problems else 'FAIL'} {base}: {a.WhichOneof('Type')}, {len(layers)} layers"
              + ("" if not problems else "\n     " + "\n     ".join(problems[:20])))
    if pairs == 0:
        print("FAIL: no round-trip pairs found")
        ok = False
    return ok


def _stages(model):
    kind = model.WhichOneof("Type")
    if kind == "pipeline":
        return list(model.pipeline.models)
    if kind in ("pipelineClassifier", "pipelineRegressor"):
        return list(getattr(model, kind).pipeline.models)
    return []


def cmd_all(args):
    ok = cmd_schema(args)
    d = args.dir or tempfile.mkdtemp(prefix="mlconv-roundtrip-")
    args.dir = d
    ok &= cmd_make(args)
    env = dict(os.environ, MLCONV_ROUNDTRIP_DIR=d)
    r = subprocess.call(["swift", "test", "--package-path", args.package_path, "--scratch-path", args.scratch_path,
                         "--filter", "CoreMLFormatTests.CoremltoolsRoundTripTests"], cwd=ROOT, env=env)
    if r != 0:
        print("FAIL: swift test exited with", r)
        return False
    return cmd_compare(args) and ok


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("schema")
    m = sub.add_parser("make")
    m.add_argument("dir")
    m.add_argument("--corpus", help="also copy *.mlmodel from this directory (e.g. ../shared/corpus/mlmodel)")
    c = sub.add_parser("compare")
    c.add_argument("dir")
    a = sub.add_parser("all")
    a.add_argument("--dir")
    a.add_argument("--corpus")
    a.add_argument("--scratch-path", default="/tmp/build-coreml")
    a.add_argument("--package-path", default=ROOT, help="Swift package to test (default: this repository)")
    args = p.parse_args()
    ok = {"schema": cmd_schema, "make": cmd_make, "compare": cmd_compare, "all": cmd_all}[args.cmd](args)
    print("RESULT:", "PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
