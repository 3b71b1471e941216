#!/usr/bin/env python3
"""Generates the Swift value types and decoders of mlconv's classical Core ML schema.

Run it through the wrapper (which picks the coremltools venv, where google.protobuf lives):

    Scripts/gen-swift-spec            # rewrite Sources/CoreMLFormat/Generated/*.swift
    Scripts/gen-swift-spec --check    # exit 1 if a generated file is stale (writes nothing)

Input: Sources/CoreMLFormat/proto/*.proto, compiled by `protoc-c --descriptor_set_out
--include_imports --include_source_info` and read with google.protobuf.descriptor_pb2.

Output (committed; `swift build` never runs this script):

    Generated/DataStructures.swift       every message of DataStructures.proto
    Generated/Parameters.swift           every message of Parameters.proto
    Generated/OtherModels.swift          every message and enum of OtherModels.proto
                                         (except the messages kept opaque, see OPAQUE)
    Generated/NetworkUpdate.swift        the on-device training messages of NeuralNetwork.proto
                                         (GENERATED_SELECTED: NetworkUpdateParameters and the
                                         loss and optimizer messages it uses), in codec mode, as
                                         are the Parameters.proto / DataStructures.proto
                                         messages they reach (Int64Parameter, Int64Range, ...)
    Generated/ClassicalParameters.swift  `Spec.ClassicalParameters`: one case per member of
                                         Model.proto's `Model.Type` oneof whose message is one
                                         of the generated OtherModels.proto messages
    Generated/NeuralNetwork.swift        the NeuralNetwork.proto messages reachable from
                                         `NeuralNetworkLayer.layer` (layer parameters), with
                                         decoders AND encoders and `unknownFields` (codec mode)
    Generated/MIL.swift                  every message and enum of MIL.proto (ML programs) under
                                         `Spec.MILSpec`, codec mode; `map<string, Message>` fields
                                         are dictionaries (encoded in key order); oneofs are
                                         `indirect` enums (MIL types and values are recursive)
    Generated/LayerParameters.swift      `Spec.LayerParameters`: one case per member of the
                                         `NeuralNetworkLayer.layer` oneof (payload: its
                                         parameters type), its field number, Apple's name,
                                         decode by field number and encode

Naming strategy for NeuralNetwork.proto: a message gets the plain name `Spec.<Message>` unless
a hand-written type still owns that name; those messages are listed in NN_REUSE (full name ->
hand-written Swift type) and the traversal from the layer oneof stops at them (they and what
only they reach are not generated). The hand-written `Spec.NeuralNetworkLayer.Layer` enum maps
its cases to `Spec.LayerParameters` (SpecLayer.swift); layer types without a case of their own
are `.other(Spec.LayerParameters)`. To migrate a hand-written type: delete it and its NN_REUSE
entry, regenerate, fix the call sites the compiler reports.

Each file starts with a header naming this script, the input .proto files (PROTO_INPUTS), an
FNV-1a 64-bit hash of them (in that order: name, NUL, content, NUL, ...) and an FNV-1a 64-bit
hash of the body (everything after the first empty line). FNV-1a is a change detector here,
not a security hash. Tests/CoreMLFormatTests/
GeneratedSpecFreshnessTests.swift recomputes both (no Python) and fails when they differ.

Conventions of the generated Swift:
  * every message becomes `public struct` under `extension Spec`, with the proto message name;
    nested messages are nested (`Spec.TreeEnsembleParameters.TreeNode`);
  * properties are the proto field names in lowerCamelCase (Swift keywords in backticks);
    scalars use the proto width (uint64 -> UInt64, int32 -> Int32, ...), bytes -> [UInt8];
    repeated fields are arrays; `map<k, v>` fields are dictionaries (a repeated key keeps its
    last value, as protobuf merges), except the fields listed in ORDERED_MAPS: those are
    "ordered maps", arrays of the generated entry struct `<Field>Entry` (`key`, `value`,
    `unknownFields`) in wire order, decoded and encoded as the repeated entry messages they are
    on the wire, so repeated keys and the file's key order survive a round trip (used for
    `CustomLayerParams.parameters`, which must re-encode byte-identically); singular message
    fields are optionals;
  * a oneof becomes a Swift enum named after the oneof in UpperCamelCase, one case per member
    (case name = member field name), and an optional property named after the oneof in
    lowerCamelCase (nil = no member set). When the enum name would equal the containing
    message's name or one of its nested types, it gets the suffix `Oneof`
    (`Spec.Kernel.KernelOneof`);
  * proto enums become `RawRepresentable` structs over Int32 with one static constant per
    value (lowerCamelCase of the value name, underscores removed; UPPER_SNAKE names are
    lowercased first: SCATTER_MAX -> scatterMax), so values outside the schema
    survive decoding; `description` gives the proto value name;
  * every type is Equatable (enums: Hashable) and Sendable and has a memberwise public init
    with proto3 defaults;
  * decoding conforms each type to the internal `CMessageDecodable` protocol of CBridge.swift,
    reading the protobuf-c message through `CReader` by field number. Classical kinds are
    decode only: they are re-encoded from the bytes kept in `Spec.ModelType.other`. The messages
    reachable from the GENERATED_SELECTED roots are codec (below), so `updateParams` can be
    rewritten (Spec.NeuralNetwork.setUpdateParameters).
    NeuralNetwork.proto messages conform to `CMessageCodable` instead (`write(to:)` through
    `CWriter`, field by field, then the kept unknown fields), so the exporter writes them.
Name collisions with hand-written top-level `Spec` types are detected by scanning
Sources/CoreMLFormat/*.swift: a colliding message must be listed in REUSE (message full name
-> existing Swift type, which must conform to CMessageDecodable) and is then not generated;
an unlisted collision stops the generator.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROTO_DIR = os.path.join(ROOT, "Sources", "CoreMLFormat", "proto")
SWIFT_DIR = os.path.join(ROOT, "Sources", "CoreMLFormat")
OUT_DIR = os.path.join(SWIFT_DIR, "Generated")
PACKAGE = "CoreML.Specification"

# The .proto files the generated code depends on (hashed into every header).
PROTO_INPUTS = ["DataStructures.proto", "Model.proto", "NeuralNetwork.proto", "OtherModels.proto",
                "Parameters.proto"]
# proto file -> generated Swift file (all of its messages and enums).
GENERATED_FILES = [
    ("DataStructures.proto", "DataStructures.swift"),
    ("Parameters.proto", "Parameters.swift"),
    ("OtherModels.proto", "OtherModels.swift"),
]
# proto file -> (generated Swift file, root messages): files whose other messages have
# hand-written Swift types; only the roots (and the messages nested in them) are generated. The
# file's header hashes SELECTED_INPUTS instead of PROTO_INPUTS.
GENERATED_SELECTED = [
    ("NeuralNetwork.proto", "NetworkUpdate.swift",
     ["NetworkUpdateParameters", "LossLayer", "CategoricalCrossEntropyLossLayer",
      "MeanSquaredErrorLossLayer", "Optimizer", "SGDOptimizer", "AdamOptimizer"]),
]
SELECTED_INPUTS = ["DataStructures.proto", "NeuralNetwork.proto", "Parameters.proto"]
# Messages recognised by name only (their content stays verbatim bytes): not generated.
OPAQUE = {"CoreML.Specification.CustomModel", "CoreML.Specification.LinkedModel"}
# MIL.proto (ML programs): every message and enum, codec mode, under `Spec.MILSpec`.
MIL_PACKAGE = "CoreML.Specification.MILSpec"
MIL_INPUTS = ["MIL.proto"]
# Message full name -> hand-written Swift type to use instead of generating one.
REUSE = {}
# NeuralNetwork.proto: the layer parameters are generated with encoders (codec mode). Only the
# messages reachable from `NeuralNetworkLayer.layer` are generated; the traversal stops at the
# messages below, whose Swift types are still hand-written (Sources/CoreMLFormat/Spec*.swift).
# Migrating one to generated code = deleting the hand-written type and its entry here.
# ActivationParams, WeightParams (with QuantizationParams) and CustomLayerParams were migrated
# this way; their hand-written remainders are convenience views without field numbers
# (SpecActivation.swift, SpecWeights.swift, SpecCustomLayer.swift). NeuralNetwork remains: it
# is reached through branch / loop bodies, and generating it would also reach the hand-written
# NeuralNetworkLayer (whose `Layer` enum wraps Spec.LayerParameters) and
# NeuralNetworkPreprocessing, the two shape-mapping enums (hand-written as ArrayShapeMapping /
# ImageShapeMapping) and NetworkUpdateParameters, which the hand-written type keeps as verbatim
# bytes on purpose (decoded and checked on demand by `updateParameters()`, so a damaged
# updateParams does not stop a network from loading) and which NetworkUpdate.swift already
# generates (the traversal would have to stop at GENERATED_SELECTED messages too).
NN_REUSE = {f"CoreML.Specification.{k}": v for k, v in {
    "NeuralNetwork": "Spec.NeuralNetwork",  # reached through branch / loop bodies
}.items()}
REUSE.update(NN_REUSE)
# `map<...>` fields (full field names) generated as ordered maps: an array of the map's entry
# message (`<Field>Entry`, a generated struct with `key`, `value` and `unknownFields`) in wire
# order, instead of a dictionary, so that files re-encode byte-identically (a dictionary would
# re-encode in key order) and repeated keys survive. Decoded and encoded as a repeated message.
ORDERED_MAPS = {
    "CoreML.Specification.CustomLayerParams.parameters",
}

SWIFT_KEYWORDS = {
    "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import",
    "init", "inout", "internal", "let", "open", "operator", "private", "protocol", "public",
    "rethrows", "static", "struct", "subscript", "typealias", "var", "break", "case", "continue",
    "default", "defer", "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat",
    "return", "switch", "where", "while", "as", "Any", "catch", "false", "is", "nil", "super",
    "self", "Self", "throw", "throws", "true", "try", "Type", "Protocol",
}

from google.protobuf import descriptor_pb2  # noqa: E402

FDP = descriptor_pb2.FieldDescriptorProto
# proto scalar type -> (Swift type, CReader singular reader, CReader repeated reader, default);
# the CWriter setters use the same labels (`w.set(n, float: v)`, `w.set(n, floats: v)`).
SCALARS = {
    FDP.TYPE_DOUBLE: ("Double", "double", "doubles", "0"),
    FDP.TYPE_FLOAT: ("Float", "float", "floats", "0"),
    FDP.TYPE_INT64: ("Int64", "int64", "int64s", "0"),
    FDP.TYPE_UINT64: ("UInt64", "uint64", "uint64s", "0"),
    FDP.TYPE_INT32: ("Int32", "int32", "int32s", "0"),
    FDP.TYPE_UINT32: ("UInt32", "uint32", "uint32s", "0"),
    FDP.TYPE_BOOL: ("Bool", "bool", "bools", "false"),
    FDP.TYPE_STRING: ("String", "string", "strings", '""'),
    FDP.TYPE_BYTES: ("[UInt8]", "bytes", None, "[]"),
}


def fnv1a64(data: bytes) -> int:
    h = 0xcbf29ce484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def proto_hash(inputs=None) -> str:
    buf = bytearray()
    for name in inputs or PROTO_INPUTS:
        with open(os.path.join(PROTO_DIR, name), "rb") as f:
            buf += name.encode() + b"\0" + f.read() + b"\0"
    return "%016x" % fnv1a64(bytes(buf))


def lower_camel(name: str) -> str:
    parts = [p for p in name.split("_") if p]
    s = parts[0][:1].lower() + parts[0][1:] + "".join(p[:1].upper() + p[1:] for p in parts[1:])
    return s


def enum_case(name: str) -> str:
    """Swift name of an enum value: UPPER_SNAKE_CASE -> upperSnakeCase, others lowerCamel."""
    if name.upper() == name:
        parts = [p.lower() for p in name.split("_") if p]
        return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])
    return lower_camel(name)


def upper_camel(name: str) -> str:
    s = lower_camel(name)
    return s[:1].upper() + s[1:]


def ident(name: str) -> str:
    return f"`{name}`" if name in SWIFT_KEYWORDS else name


def doc_lines(text: str, indent: str):
    lines = [l.strip() for l in (text or "").strip().splitlines()]
    return [f"{indent}/// {l}".rstrip() for l in lines if l]


class Schema:
    def __init__(self, fds):
        self.messages = {}   # full name -> (DescriptorProto, file name, source path)
        self.enums = {}      # full name -> (EnumDescriptorProto, file name, source path)
        self.comments = {}   # (file name, path tuple) -> comment text
        for fd in fds.file:
            for loc in fd.source_code_info.location:
                text = loc.leading_comments.strip() or loc.trailing_comments.strip()
                if text:
                    self.comments[(fd.name, tuple(loc.path))] = text
            for i, m in enumerate(fd.message_type):
                self._add_message(f"{fd.package}.{m.name}", m, fd.name, (4, i))
            for i, e in enumerate(fd.enum_type):
                self.enums[f"{fd.package}.{e.name}"] = (e, fd.name, (5, i))

    def _add_message(self, full, m, fname, path):
        self.messages[full] = (m, fname, path)
        for i, n in enumerate(m.nested_type):
            self._add_message(f"{full}.{n.name}", n, fname, path + (3, i))
        for i, e in enumerate(m.enum_type):
            self.enums[f"{full}.{e.name}"] = (e, fname, path + (4, i))

    def comment(self, fname, path):
        return self.comments.get((fname, tuple(path)), "")


def swift_type_name(full: str) -> str:
    if full in REUSE:
        return REUSE[full]
    assert full.startswith(PACKAGE + "."), full
    return "Spec." + full[len(PACKAGE) + 1:]


def existing_spec_types():
    """Top-level types declared inside `extension Spec { ... }` by hand-written sources."""
    names = set()
    for path in glob.glob(os.path.join(SWIFT_DIR, "*.swift")):
        inside = False
        with open(path, encoding="utf-8") as f:
            for line in f:
                if re.match(r"^(public )?extension Spec\s*\{", line):
                    inside = True
                elif line.startswith("}"):
                    inside = False
                elif inside:
                    m = re.match(r"^    (?:public |internal |fileprivate |private )?(?:indirect )?"
                                 r"(?:final )?(?:struct|enum|class|typealias) (\w+)", line)
                    if m:
                        names.add(m.group(1))
    return names


class Generator:
    def __init__(self, schema: Schema):
        self.s = schema
        # Top-level messages of GENERATED_FILES / GENERATED_SELECTED generated in codec mode:
        # those reachable from the GENERATED_SELECTED roots (NetworkUpdate.swift's messages and
        # the Parameters.proto / DataStructures.proto messages they use), so updateParams can be
        # written. Every other message of those files stays decode only.
        self.mil_names = {m.name for k, (m, fn, p) in schema.messages.items() if fn == "MIL.proto"}
        self.codec = set()
        for proto, _, roots in GENERATED_SELECTED:
            self.codec |= set(self.reachable([f"{PACKAGE}.{r}" for r in roots])[1])

    # ---- ordered maps (ORDERED_MAPS) -----------------------------------------------------------

    def ordered_entries(self):
        """Full names of the map entry messages of the ORDERED_MAPS fields."""
        out = set()
        for field_full in ORDERED_MAPS:
            msg_full, _, name = field_full.rpartition(".")
            m = self.s.messages[msg_full][0]
            f = [x for x in m.field if x.name == name]
            if not f or not self.s.messages[f[0].type_name.lstrip(".")][0].options.map_entry:
                sys.exit(f"gen-swift-spec: ORDERED_MAPS: {field_full} is not a map field")
            out.add(f[0].type_name.lstrip("."))
        return out

    def is_ordered_entry(self, msg_full, nested_name):
        return f"{msg_full}.{nested_name}" in self.ordered_entries()

    # ---- types --------------------------------------------------------------------------------

    def field_info(self, f, msg_full):
        """(Swift property type, default expression, decode expression) of a non-oneof field."""
        repeated = f.label == FDP.LABEL_REPEATED
        if f.type == FDP.TYPE_MESSAGE:
            sub = f.type_name.lstrip(".")
            m = self.s.messages[sub][0]
            if m.options.map_entry and f"{msg_full}.{f.name}" not in ORDERED_MAPS:
                k, v = m.field[0], m.field[1]
                if k.type == FDP.TYPE_STRING and v.type == FDP.TYPE_MESSAGE:
                    vt = swift_type_name(v.type_name.lstrip("."))
                    return (f"[String: {vt}]", "[:]", f"try r.messageMap({f.number}, as: {vt}.self)")
                if k.type not in SCALARS or v.type not in SCALARS or v.type == FDP.TYPE_BYTES:
                    sys.exit(f"gen-swift-spec: {msg_full}.{f.name}: map value type not supported")
                kt, kr = SCALARS[k.type][0], SCALARS[k.type][1]
                vt, vr = SCALARS[v.type][0], SCALARS[v.type][1]
                return (f"[{kt}: {vt}]", "[:]",
                        f"r.map({f.number}, key: {{ $0.{kr}(1) }}, value: {{ $0.{vr}(2) }})")
            t = swift_type_name(sub)
            if repeated:
                return (f"[{t}]", "[]", f"try r.messages({f.number}, as: {t}.self)")
            return (f"{t}?", "nil", f"try r.message({f.number}, as: {t}.self)")
        if f.type == FDP.TYPE_ENUM:
            t = swift_type_name(f.type_name.lstrip("."))
            if repeated:
                return (f"[{t}]", "[]", f"r.enumValues({f.number}).map {{ {t}(rawValue: $0) }}")
            e = self.s.enums[f.type_name.lstrip(".")][0]
            zero = [v.name for v in e.value if v.number == 0]
            default = f"{t}.{ident(enum_case(zero[0]))}" if zero else f"{t}(rawValue: 0)"
            return (t, default, f"{t}(rawValue: r.enumValue({f.number}))")
        if f.type not in SCALARS:
            sys.exit(f"gen-swift-spec: {msg_full}.{f.name}: proto type {f.type} not supported "
                     "(add a CReader helper and a SCALARS entry)")
        t, single, multi, default = SCALARS[f.type]
        if repeated:
            if multi is None:
                sys.exit(f"gen-swift-spec: {msg_full}.{f.name}: repeated bytes not supported")
            return (f"[{t}]", "[]", f"r.{multi}({f.number})")
        return (t, default, f"r.{single}({f.number})")

    def member_info(self, f):
        """(associated Swift type, decode expression) of a oneof member."""
        if f.type == FDP.TYPE_MESSAGE:
            t = swift_type_name(f.type_name.lstrip("."))
            return t, f"try r.message({f.number}, as: {t}.self) ?? {t}()"
        if f.type == FDP.TYPE_ENUM:
            t = swift_type_name(f.type_name.lstrip("."))
            return t, f"{t}(rawValue: r.enumValue({f.number}))"
        t, single, _, _ = SCALARS[f.type]
        return t, f"r.{single}({f.number})"

    def oneof_type_name(self, m, oneof_name):
        name = upper_camel(oneof_name)
        # `Type` would name the metatype (`X.Type`), so it is never used as a nested type name.
        taken = {m.name, "Type"} | {n.name for n in m.nested_type} | {e.name for e in m.enum_type}
        if m.name in self.mil_names:
            # MIL: a oneof named like any MIL message (`value` in Value, ImmediateValue and
            # TensorValue) would shadow that message inside the type.
            taken |= self.mil_names
        return name + "Oneof" if name in taken else name

    def enum_decl(self, full, indent):
        e, fname, path = self.s.enums[full]
        name = e.name
        out = doc_lines(self.s.comment(fname, path), indent)
        out.append(f"{indent}/// `{full}`: an open enum (values outside the schema are kept).")
        out.append(f"{indent}public struct {name}: RawRepresentable, Hashable, Sendable, CustomStringConvertible {{")
        i2 = indent + "    "
        out.append(f"{i2}public var rawValue: Int32")
        out.append(f"{i2}public init(rawValue: Int32) {{ self.rawValue = rawValue }}")
        for j, v in enumerate(e.value):
            out += doc_lines(self.s.comment(fname, path + (2, j)), i2)
            out.append(f"{i2}public static let {ident(enum_case(v.name))} = {name}(rawValue: {v.number})")
        out.append(f"{i2}/// The proto value name, or `{name}(<raw value>)` for a value outside the schema.")
        out.append(f"{i2}public var description: String {{")
        out.append(f"{i2}    switch rawValue {{")
        for v in e.value:
            out.append(f'{i2}    case {v.number}: return "{v.name}"')
        out.append(f'{i2}    default: return "{name}(\\(rawValue))"')
        out.append(f"{i2}    }}")
        out.append(f"{i2}}}")
        out.append(f"{indent}}}")
        return out

    def struct_decl(self, full, indent, codec=False):
        m, fname, path = self.s.messages[full]
        out = doc_lines(self.s.comment(fname, path), indent)
        out.append(f"{indent}/// `{full}` ({fname}).")
        out.append(f"{indent}public struct {m.name}: Equatable, Sendable {{")
        i2 = indent + "    "
        props = []  # (name, type, default)
        for j, f in enumerate(m.field):
            if f.HasField("oneof_index"):
                continue
            t, default, _ = self.field_info(f, full)
            out += doc_lines(self.s.comment(fname, path + (2, j)), i2)
            out.append(f"{i2}/// Field {f.number} `{f.name}`.")
            out.append(f"{i2}public var {ident(lower_camel(f.name))}: {t}")
            props.append((lower_camel(f.name), t, default))
        for k, o in enumerate(m.oneof_decl):
            tname = self.oneof_type_name(m, o.name)
            out += doc_lines(self.s.comment(fname, path + (8, k)), i2)
            out.append(f"{i2}/// The `{o.name}` oneof; nil when no member is set.")
            out.append(f"{i2}public var {ident(lower_camel(o.name))}: {tname}?")
            props.append((lower_camel(o.name), f"{tname}?", "nil"))
        if codec:
            out.append(f"{i2}/// Fields outside mlconv's schema, kept verbatim and re-encoded.")
            out.append(f"{i2}public var unknownFields: UnknownFields")
            props.append(("unknownFields", "UnknownFields", "[]"))
        names = [p[0] for p in props]
        if len(set(names)) != len(names):
            sys.exit(f"gen-swift-spec: {full}: two properties would share a name: {names}")
        # memberwise init
        params = ", ".join(f"{ident(n)}: {t} = {d}" for n, t, d in props)
        if props:
            out.append("")
            out.append(f"{i2}public init({params}) {{")
            for n, _, _ in props:
                out.append(f"{i2}    self.{n} = {ident(n)}")
            out.append(f"{i2}}}")
        else:
            out.append(f"{i2}public init() {{}}")
        # oneof enums
        for k, o in enumerate(m.oneof_decl):
            tname = self.oneof_type_name(m, o.name)
            out.append("")
            out.append(f"{i2}/// Members of the `{o.name}` oneof.")
            # MIL's types and values are recursive (a list type holds a value type, a value a
            # tuple of values): their oneof payloads are boxed so the structs have a size.
            indirect = "indirect " if full.startswith(MIL_PACKAGE + ".") else ""
            out.append(f"{i2}public {indirect}enum {tname}: Equatable, Sendable {{")
            for j, f in enumerate(m.field):
                if f.HasField("oneof_index") and f.oneof_index == k:
                    t, _ = self.member_info(f)
                    out += doc_lines(self.s.comment(fname, path + (2, j)), i2 + "    ")
                    out.append(f"{i2}    /// Field {f.number} `{f.name}`.")
                    out.append(f"{i2}    case {ident(lower_camel(f.name))}({t})")
            out.append(f"{i2}}}")
        # nested enums and messages
        for e in m.enum_type:
            out.append("")
            out += self.enum_decl(f"{full}.{e.name}", i2)
        for n in m.nested_type:
            if n.options.map_entry and not self.is_ordered_entry(full, n.name):
                continue
            out.append("")
            out += self.struct_decl(f"{full}.{n.name}", i2, codec)
        out.append(f"{indent}}}")
        return out

    # ---- decoders -----------------------------------------------------------------------------

    def write_expr(self, f, value, member=False):
        """The CWriter statement that stores `value` (a Swift expression) in field f."""
        n = f.number
        repeated = f.label == FDP.LABEL_REPEATED and not member
        if f.type == FDP.TYPE_MESSAGE:
            sub = self.s.messages[f.type_name.lstrip(".")][0]
            if sub.options.map_entry and f.type_name.lstrip(".") not in self.ordered_entries():
                k, v = sub.field[0], sub.field[1]
                if k.type == FDP.TYPE_STRING and v.type == FDP.TYPE_MESSAGE:
                    return f"try w.set({n}, messageMap: {value})"
                sys.exit(f"gen-swift-spec: field {f.name}: only map<string, message> fields can be encoded")
            return f"try w.set({n}, {'messages' if repeated else 'message'}: {value})"
        if f.type == FDP.TYPE_ENUM:
            return (f"w.set({n}, enumValues: {value}.map {{ $0.rawValue }})" if repeated
                    else f"w.set({n}, enum: {value}.rawValue)")
        _, single, multi, _ = SCALARS[f.type]
        label = multi if repeated else single
        if label == "bytes" and repeated:
            sys.exit(f"gen-swift-spec: field {f.name}: repeated bytes not supported")
        label = {"enumValue": "enum"}.get(label, label)
        throws = "try " if f.type == FDP.TYPE_STRING else ""
        return f"{throws}w.set({n}, {label}: {value})"

    def decoder(self, full, codec=False):
        m = self.s.messages[full][0]
        t = swift_type_name(full)
        proto = "CMessageCodable" if codec else "CMessageDecodable"
        out = [f"extension {t}: {proto} {{", "    init(reading r: CReader) throws {"]
        for f in m.field:
            if f.HasField("oneof_index"):
                continue
            _, _, expr = self.field_info(f, full)
            out.append(f"        {lower_camel(f.name)} = {expr}")
        for k, o in enumerate(m.oneof_decl):
            members = [f for f in m.field if f.HasField("oneof_index") and f.oneof_index == k]
            tname = f"{t}.{self.oneof_type_name(m, o.name)}"
            prop = lower_camel(o.name)
            out.append(f"        switch r.oneofCase({members[0].number}) {{")
            for f in members:
                _, expr = self.member_info(f)
                out.append(f"        case {f.number}: {prop} = {tname}.{ident(lower_camel(f.name))}({expr})")
            out.append(f"        default: {prop} = nil")
            out.append("        }")
        if codec:
            out.append("        unknownFields = r.unknownFields")
            out.append("    }")
            out.append("")
            out.append("    func write(to w: CWriter) throws {")
            for f in m.field:  # field-number order is protobuf-c's, whatever the order here
                if f.HasField("oneof_index"):
                    continue
                out.append("        " + self.write_expr(f, ident(lower_camel(f.name))))
            for k, o in enumerate(m.oneof_decl):
                members = [f for f in m.field if f.HasField("oneof_index") and f.oneof_index == k]
                prop = lower_camel(o.name)
                out.append(f"        switch {ident(prop)} {{")
                out.append("        case nil: break")
                for f in members:
                    out.append(f"        case let .{ident(lower_camel(f.name))}(v)?: {self.write_expr(f, 'v', member=True)}")
                out.append("        }")
            out.append("        w.setUnknownFields(unknownFields)")
        out.append("    }")
        out.append("}")
        result = [out]
        for n in m.nested_type:
            if not n.options.map_entry or self.is_ordered_entry(full, n.name):
                result += self.decoder(f"{full}.{n.name}", codec)
        return result

    # ---- files --------------------------------------------------------------------------------

    def proto_file_body(self, proto_name, collisions, roots=None):
        tops_m = [k for k, (m, fn, p) in self.s.messages.items() if fn == proto_name and len(p) == 2]
        tops_e = [k for k, (e, fn, p) in self.s.enums.items() if fn == proto_name and len(p) == 2]
        if roots is not None:
            wanted = {f"{PACKAGE}.{r}" for r in roots}
            tops_m = [k for k in tops_m if k in wanted]
            tops_e = []
        lines = ["import CCoreMLProto", ""]
        generated = []
        for full in tops_e:
            lines += ["extension Spec {"] + self.enum_decl(full, "    ") + ["}", ""]
        for full in tops_m:
            if full in OPAQUE or full in REUSE:
                continue
            short = full[len(PACKAGE) + 1:]
            if short in collisions:
                sys.exit(f"gen-swift-spec: Spec.{short} is already declared by hand-written code; "
                         f"list {full} in REUSE (Scripts/gen_swift_spec.py) or rename it")
            lines += ["extension Spec {"] + self.struct_decl(full, "    ", codec=full in self.codec) + ["}", ""]
            generated.append(full)
        lines.append("// MARK: - Decoding (protobuf-c message -> Swift value, via CReader)")
        lines.append("")
        for full in generated:
            for block in self.decoder(full, codec=full in self.codec):
                lines += block + [""]
        return "\n".join(lines).rstrip("\n") + "\n"

    def reachable(self, roots):
        """Messages and top-level enums of NeuralNetwork.proto reachable from `roots` (full
        names), not crossing REUSE; in file order."""
        seen, todo = set(), list(roots)
        while todo:
            full = todo.pop()
            if full in seen or full in REUSE:
                continue
            seen.add(full)
            if full in self.s.enums:
                continue
            def walk(mfull):
                m = self.s.messages[mfull][0]
                for f in m.field:
                    if f.type_name:
                        todo.append(f.type_name.lstrip("."))
                for n in m.nested_type:
                    walk(f"{mfull}.{n.name}")
            walk(full)
        # keep top-level declarations only (nested ones come with their parent)
        tops = lambda d: [k for k, (x, fn, p) in d.items() if len(p) == 2 and k in seen]
        return tops(self.s.enums), tops(self.s.messages)

    def mil_body(self):
        """Every enum and message of MIL.proto, with decoders and encoders, under Spec.MILSpec
        (the namespace `Spec.MILSpec` itself is declared by hand in MILProgram.swift)."""
        tops_m = [k for k, (m, fn, p) in self.s.messages.items() if fn == "MIL.proto" and len(p) == 2]
        tops_e = [k for k, (e, fn, p) in self.s.enums.items() if fn == "MIL.proto" and len(p) == 2]
        lines = ["import CCoreMLProto", ""]
        for full in tops_e:
            lines += ["extension Spec.MILSpec {"] + self.enum_decl(full, "    ") + ["}", ""]
        for full in tops_m:
            lines += ["extension Spec.MILSpec {"] + self.struct_decl(full, "    ", codec=True) + ["}", ""]
        lines.append("// MARK: - Coding (Swift value <-> protobuf-c message, via CReader / CWriter)")
        lines.append("")
        for full in tops_m:
            for block in self.decoder(full, codec=True):
                lines += block + [""]
        return "\n".join(lines).rstrip("\n") + "\n"

    def layer_members(self):
        layer, _, _ = self.s.messages[f"{PACKAGE}.NeuralNetworkLayer"]
        k = [i for i, o in enumerate(layer.oneof_decl) if o.name == "layer"][0]
        return [f for f in layer.field if f.HasField("oneof_index") and f.oneof_index == k]

    def nn_body(self, collisions):
        members = self.layer_members()
        enums, msgs = self.reachable([f.type_name.lstrip(".") for f in members])
        lines = ["import CCoreMLProto", ""]
        for full in enums:
            lines += ["extension Spec {"] + self.enum_decl(full, "    ") + ["}", ""]
        for full in msgs:
            short = full[len(PACKAGE) + 1:]
            if short in collisions:
                sys.exit(f"gen-swift-spec: Spec.{short} is already declared by hand-written code; "
                         f"list {full} in NN_REUSE (Scripts/gen_swift_spec.py) or rename it")
            lines += ["extension Spec {"] + self.struct_decl(full, "    ", codec=True) + ["}", ""]
        lines.append("// MARK: - Coding (Swift value <-> protobuf-c message, via CReader / CWriter)")
        lines.append("")
        for full in msgs:
            for block in self.decoder(full, codec=True):
                lines += block + [""]
        return "\n".join(lines).rstrip("\n") + "\n"

    def layer_parameters_body(self):
        members = self.layer_members()
        L = ["import CCoreMLProto", "", "extension Spec {"]
        L.append("    /// The parameters of one neural network layer: one case per member of Core ML's")
        L.append("    /// `NeuralNetworkLayer.layer` oneof (the case name is the member's name, the payload its")
        L.append("    /// parameters message). `Spec.NeuralNetworkLayer.Layer` maps it to its own cases.")
        L.append("    public enum LayerParameters: Equatable, Sendable {")
        for f in members:
            t = swift_type_name(f.type_name.lstrip("."))
            L.append(f"        /// `{f.name}` (field {f.number}).")
            L.append(f"        case {ident(lower_camel(f.name))}({t})")
        L.append("")
        L.append("        /// The member's field number in `NeuralNetworkLayer`.")
        L.append("        public var fieldNumber: UInt32 {")
        L.append("            switch self {")
        for f in members:
            L.append(f"            case .{ident(lower_camel(f.name))}: return {f.number}")
        L.append("            }")
        L.append("        }")
        L.append("")
        L.append("        /// The member's name in Apple's schema, e.g. \"batchedMatmul\".")
        L.append("        public var typeName: String {")
        L.append("            switch self {")
        for f in members:
            L.append(f"            case .{ident(lower_camel(f.name))}: return \"{f.name}\"")
        L.append("            }")
        L.append("        }")
        L.append("")
        L.append("        /// Apple's name of the member with field number `fieldNumber`; nil for other numbers.")
        L.append("        public static func typeName(fieldNumber: UInt32) -> String? {")
        L.append("            switch fieldNumber {")
        for f in members:
            L.append(f"            case {f.number}: return \"{f.name}\"")
        L.append("            default: return nil")
        L.append("            }")
        L.append("        }")
        L.append("")
        L.append("        /// Field numbers of every member, ascending.")
        L.append("        public static let fieldNumbers: [UInt32] = [")
        nums = sorted(f.number for f in members)
        for i in range(0, len(nums), 12):
            L.append("            " + ", ".join(str(x) for x in nums[i:i + 12]) + ",")
        L.append("        ]")
        L.append("")
        L.append("        /// The member whose parameters message has no fields (copy, sin, addBroadcastable, …),")
        L.append("        /// by field number; nil for any other field number.")
        L.append("        public static func parameterless(fieldNumber: UInt32) -> LayerParameters? {")
        L.append("            switch fieldNumber {")
        for f in members:
            m = self.s.messages[f.type_name.lstrip(".")][0]
            if not m.field and f.type_name.lstrip(".") not in REUSE:
                t = swift_type_name(f.type_name.lstrip("."))
                L.append(f"            case {f.number}: return .{ident(lower_camel(f.name))}({t}())")
        L.append("            default: return nil")
        L.append("            }")
        L.append("        }")
        L.append("")
        L.append("        /// Decodes member `fieldNumber` of the layer message `r` (nil if it is not a member or not set).")
        L.append("        static func read(fieldNumber: UInt32, _ r: CReader) throws -> LayerParameters? {")
        L.append("            switch fieldNumber {")
        for f in members:
            t = swift_type_name(f.type_name.lstrip("."))
            L.append(f"            case {f.number}: return try r.message({f.number}, as: {t}.self).map {{ .{ident(lower_camel(f.name))}($0) }}")
        L.append("            default: return nil")
        L.append("            }")
        L.append("        }")
        L.append("")
        L.append("        /// Sets this member on the layer message under construction.")
        L.append("        func write(to w: CWriter) throws {")
        L.append("            switch self {")
        for f in members:
            L.append(f"            case let .{ident(lower_camel(f.name))}(v): try w.set({f.number}, message: v)")
        L.append("            }")
        L.append("        }")
        L.append("    }")
        L.append("}")
        return "\n".join(L) + "\n"

    def classical_body(self):
        model, _, _ = self.s.messages[f"{PACKAGE}.Model"]
        type_oneof = [i for i, o in enumerate(model.oneof_decl) if o.name == "Type"][0]
        cases = []
        for f in model.field:
            if not (f.HasField("oneof_index") and f.oneof_index == type_oneof and f.type == FDP.TYPE_MESSAGE):
                continue
            full = f.type_name.lstrip(".")
            if self.s.messages[full][1] != "OtherModels.proto" or full in OPAQUE:
                continue
            cases.append((f.name, f.number, swift_type_name(full), full))
        L = ["import CCoreMLProto", "", "extension Spec {"]
        L.append("    /// The decoded parameters of a classical (non neural network) model: one case per member")
        L.append("    /// of Core ML's `Model.Type` oneof whose message mlconv's schema declares in full")
        L.append("    /// (OtherModels.proto). Obtained with `Spec.Model.classicalParameters()`.")
        L.append("    public enum ClassicalParameters: Equatable, Sendable {")
        for name, num, t, full in cases:
            L.append(f"        /// `Model.{name}` (field {num}): `{full}`.")
            L.append(f"        case {name}({t})")
        L.append("")
        L.append("        /// The `Model.Type` member these parameters belong to.")
        L.append("        public var kind: Spec.ModelKind {")
        L.append("            switch self {")
        for name, num, _, _ in cases:
            L.append(f"            case .{name}: return Spec.ModelKind(rawValue: {num})")
        L.append("            }")
        L.append("        }")
        L.append("")
        L.append("        /// Every model kind that has a case here, in field-number order.")
        L.append("        public static let kinds: [Spec.ModelKind] = [")
        for name, num, _, _ in cases:
            L.append(f"            Spec.ModelKind(rawValue: {num}),  // {name}")
        L.append("        ]")
        L.append("")
        L.append("        /// Decodes a protobuf-c message of model kind `kind` (nil for any other kind).")
        L.append("        static func read(kind: Spec.ModelKind, _ r: CReader) throws -> ClassicalParameters? {")
        L.append("            switch kind.rawValue {")
        for name, num, t, _ in cases:
            L.append(f"            case {num}: return .{name}(try {t}(reading: r))")
        L.append("            default: return nil")
        L.append("            }")
        L.append("        }")
        L.append("    }")
        L.append("}")
        return "\n".join(L) + "\n"


def render(body: str, inputs_hash: str, inputs=None) -> str:
    header = [
        "// GENERATED by Scripts/gen-swift-spec (Scripts/gen_swift_spec.py). Do not edit: change the",
        "// .proto files in Sources/CoreMLFormat/proto and run Scripts/gen-swift-spec.",
        "// proto-inputs: " + " ".join(inputs or PROTO_INPUTS),
        f"// proto-hash: fnv1a64 {inputs_hash}",
        f"// body-hash: fnv1a64 {'%016x' % fnv1a64(body.encode())}",
    ]
    return "\n".join(header) + "\n\n" + body


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="only report stale files")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "schema.pb")
        protos = sorted(os.path.basename(p) for p in glob.glob(os.path.join(PROTO_DIR, "*.proto")))
        subprocess.check_call(["protoc-c", "--proto_path=" + PROTO_DIR, "--include_imports",
                               "--include_source_info", "--descriptor_set_out=" + out] + protos)
        fds = descriptor_pb2.FileDescriptorSet()
        with open(out, "rb") as f:
            fds.ParseFromString(f.read())
    gen = Generator(Schema(fds))
    collisions = existing_spec_types()
    h = proto_hash()
    files = {swift: render(gen.proto_file_body(proto, collisions), h) for proto, swift in GENERATED_FILES}
    files["ClassicalParameters.swift"] = render(gen.classical_body(), h)
    hs = proto_hash(SELECTED_INPUTS)
    for proto, swift, roots in GENERATED_SELECTED:
        files[swift] = render(gen.proto_file_body(proto, collisions, roots), hs, SELECTED_INPUTS)
    files["NeuralNetwork.swift"] = render(gen.nn_body(collisions), h)
    files["LayerParameters.swift"] = render(gen.layer_parameters_body(), h)
    files["MIL.swift"] = render(gen.mil_body(), proto_hash(MIL_INPUTS), MIL_INPUTS)
    stale = []
    os.makedirs(OUT_DIR, exist_ok=True)
    for name, text in files.items():
        path = os.path.join(OUT_DIR, name)
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if old != text:
            stale.append(name)
            if not args.check:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
    if args.check:
        print("gen-swift-spec: " + (f"stale: {', '.join(stale)}" if stale else "up to date"))
        sys.exit(1 if stale else 0)
    print(f"gen-swift-spec: wrote {len(stale)} of {len(files)} files in Sources/CoreMLFormat/Generated"
          + (f" ({', '.join(stale)})" if stale else " (all up to date)"))


if __name__ == "__main__":
    main()
