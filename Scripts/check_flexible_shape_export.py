#!/usr/bin/env python3
"""Round trip of flexible input shapes: `mlconv keras --flexible-shape` → .mlmodel → coremltools.

Run (from the repository root, after `swift build`):

    PY=$(Scripts/coremltools8-env)
    $PY Scripts/check_flexible_shape_export.py [path/to/mlconv]     # default .build/debug/mlconv

Converts Fixtures/flexible/fcn.h5 (a fully-convolutional tf.keras model, see
Scripts/make_flexible_shape_fixtures.py) three ways and checks, with coremltools' own protobuf
classes (`coremltools.utils.load_spec`) and `MLModel(..., skip_model_load=True)`, that the
written files hold what Core ML 2 (specificationVersion 3) expects:
  range       --flexible-shape image=1..*,4..16,4..*,3   multiArray [3, 8, 8], shapeRange
                                                         [3..3], [4..16], [4..-1]
  enumerated  --flexible-shape image=1x8x8x3,1x12x10x3   enumeratedShapes [3,8,8], [3,12,10]
  image       --image-input image + ranges 4..32         imageType 8x8, imageSizeRange
                                                         width 4..32, height 4..32
Exits 1 listing every mismatch. (coremltools cannot run models on Linux; the numeric checks are
in Tests/MLConvCLITests/FlexibleShapeTests.swift.)
"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FCN = os.path.join(ROOT, "Fixtures", "flexible", "fcn.h5")


def main():
    import coremltools as ct
    mlconv = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build", "debug", "mlconv")
    problems = []
    with tempfile.TemporaryDirectory() as d:
        def convert(name, *extra):
            out = os.path.join(d, name + ".mlmodel")
            subprocess.run([mlconv, "keras", FCN, "--input-shape", "image=8,8,3", *extra, "-o", out], check=True,
                           stdout=subprocess.DEVNULL)
            ct.models.MLModel(out, skip_model_load=True)  # coremltools parses and accepts the file
            spec = ct.utils.load_spec(out)
            if spec.specificationVersion != 3:
                problems.append(f"{name}: specificationVersion {spec.specificationVersion}, expected 3")
            return spec.description.input[0].type

        def expect(name, got, want):
            if got != want:
                problems.append(f"{name}: {got} != {want}")
            else:
                print(f"ok  {name}: {got}")

        t = convert("range", "--flexible-shape", "image=1..*,4..16,4..*,3")
        expect("range shape", list(t.multiArrayType.shape), [3, 8, 8])
        expect("range shapeRange", [(r.lowerBound, r.upperBound) for r in t.multiArrayType.shapeRange.sizeRanges],
               [(3, 3), (4, 16), (4, -1)])
        t = convert("enumerated", "--flexible-shape", "image=1x8x8x3,1x12x10x3")
        expect("enumeratedShapes", [list(s.shape) for s in t.multiArrayType.enumeratedShapes.shapes], [[3, 8, 8], [3, 12, 10]])
        t = convert("image", "--image-input", "image", "--flexible-shape", "image=1,4..32,4..32,3")
        expect("image size", (t.imageType.width, t.imageType.height), (8, 8))
        r = t.imageType.imageSizeRange
        expect("imageSizeRange", ((r.widthRange.lowerBound, r.widthRange.upperBound), (r.heightRange.lowerBound, r.heightRange.upperBound)),
               ((4, 32), (4, 32)))
    if problems:
        print("\n".join("FAIL " + p for p in problems))
        sys.exit(1)
    print("all flexible-shape fields read back by coremltools", ct.__version__)


if __name__ == "__main__":
    main()
