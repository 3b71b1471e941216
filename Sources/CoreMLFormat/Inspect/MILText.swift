// ML programs as MIL text (what `mlconv inspect` prints for .mlpackage / mlProgram files): each
// function with its typed inputs and opset, each op with its typed outputs and named arguments,
// constants shown by value (small ones) or by where they are stored (weight file and offset).
extension Spec.MILSpec.Program {
    /// The program as MIL text, in the style of coremltools' `print(prog)`:
    ///
    ///     main(%x: (1, 3, 10, 10, fp32)) [opset CoreML5] {
    ///       %w: (6, 3, 3, 3, fp16) = const(val=blob(@model_path/weights/weight.bin, offset 64))
    ///       %y: (1, 6, 10, 10, fp32) = conv(x=%x, weight=%w, strides=[1, 1], pad_type="valid")
    ///     } -> (%y)
    ///
    /// - Parameter maxValues: constants with at most this many values are printed in full.
    public func milText(maxValues: Int = 8) -> String {
        var out: [String] = []
        if version != 0 { out.append("program(version \(version))") }
        for name in functions.keys.sorted() {
            guard let f = functions[name] else { continue }
            let ins = f.inputs.map { "%\($0.name): \(MILTextFormat.type($0.type))" }.joined(separator: ", ")
            out.append("\(name)(\(ins)) [opset \(f.opset)] {")
            if let b = f.blockSpecializations[f.opset] ?? f.blockSpecializations.values.first {
                MILTextFormat.block(b, indent: "  ", maxValues: maxValues, into: &out)
            }
            let outs = (f.blockSpecializations[f.opset]?.outputs ?? []).map { "%" + $0 }.joined(separator: ", ")
            out.append("} -> (\(outs))")
        }
        return out.joined(separator: "\n")
    }
}

enum MILTextFormat {
    static func type(_ t: Spec.MILSpec.ValueType?) -> String {
        guard let t = t?.type else { return "?" }
        switch t {
        case let .tensorType(tt):
            let dims = tt.rank < 0 ? ["*"] : tt.dimensions.map { d -> String in
                if case let .constant(c)? = d.dimension { return "\(c.size)" }
                return "?"
            }
            return "(" + (dims + [MILTypes.name(tt.dataType)]).joined(separator: ", ") + ")"
        case let .listType(l): return "list[\(type(l.type))]"
        case let .tupleType(tu): return "tuple[" + tu.types.map { type($0) }.joined(separator: ", ") + "]"
        case let .dictionaryType(d): return "dict[\(type(d.keyType)), \(type(d.valueType))]"
        case let .stateType(s): return "state[\(type(s.wrappedType))]"
        }
    }

    static func value(_ v: Spec.MILSpec.Value, maxValues: Int) -> String {
        switch v.value {
        case let .blobFileValue(b)?:
            return "blob(\(b.fileName), offset \(b.offset))"
        case let .immediateValue(iv)?:
            switch iv.value {
            case let .tensor(t)?: return tensor(t, type: v.type, maxValues: maxValues)
            case let .tuple(t)?: return "(" + t.values.map { value($0, maxValues: maxValues) }.joined(separator: ", ") + ")"
            case let .list(l)?: return "list[" + l.values.map { value($0, maxValues: maxValues) }.joined(separator: ", ") + "]"
            case let .dictionary(d)?:
                return "{" + d.values.map { p in
                    (p.key.map { value($0, maxValues: maxValues) } ?? "?") + ": " + (p.value.map { value($0, maxValues: maxValues) } ?? "?")
                }.joined(separator: ", ") + "}"
            case nil: return "?"
            }
        case nil: return "?"
        }
    }

    static func tensor(_ t: Spec.MILSpec.TensorValue, type vt: Spec.MILSpec.ValueType?, maxValues: Int) -> String {
        var scalar = false
        var dtype: Spec.MILSpec.DataType = .unusedType
        if case let .tensorType(tt)? = vt?.type { scalar = tt.rank == 0; dtype = tt.dataType }
        func list<T>(_ v: [T], _ f: (T) -> String) -> String {
            if scalar, v.count == 1 { return f(v[0]) }
            if v.count > maxValues { return "[\(v.count) values]" }
            return "[" + v.map(f).joined(separator: ", ") + "]"
        }
        switch t.value {
        case let .floats(f)?: return list(f.values) { "\($0)" }
        case let .doubles(d)?: return list(d.values) { "\($0)" }
        case let .ints(i)?: return list(i.values) { "\($0)" }
        case let .longInts(i)?: return list(i.values) { "\($0)" }
        case let .bools(b)?: return list(b.values) { "\($0)" }
        case let .strings(s)?: return list(s.values) { "\"\($0)\"" }
        case let .bytes(b)?:
            if dtype == .float16, b.values.count % 2 == 0 {
                let halves = stride(from: 0, to: b.values.count, by: 2).map { UInt16(b.values[$0]) | UInt16(b.values[$0 + 1]) << 8 }
                return list(halves) { "\(Float(Float16(bitPattern: $0)))" }
            }
            return "bytes[\(b.values.count)]"
        case nil: return "[]"
        }
    }

    static func block(_ b: Spec.MILSpec.Block, indent: String, maxValues: Int, into out: inout [String]) {
        for op in b.operations {
            let outs = op.outputs.map { "%\($0.name): \(type($0.type))" }.joined(separator: ", ")
            var args: [String] = []
            for key in op.inputs.keys.sorted() {
                let bindings = op.inputs[key]?.arguments ?? []
                let rendered = bindings.map { binding -> String in
                    switch binding.binding {
                    case let .name(n)?: return "%" + n
                    case let .value(v)?: return value(v, maxValues: maxValues)
                    case nil: return "?"
                    }
                }
                args.append("\(key)=" + (rendered.count == 1 ? rendered[0] : "(" + rendered.joined(separator: ", ") + ")"))
            }
            for key in op.attributes.keys.sorted() where key != "name" {
                if let v = op.attributes[key] { args.append("\(key)=" + value(v, maxValues: maxValues)) }
            }
            out.append("\(indent)\(outs) = \(op.type)(\(args.joined(separator: ", ")))")
            for (i, nested) in op.blocks.enumerated() {
                let ins = nested.inputs.map { "%\($0.name): \(type($0.type))" }.joined(separator: ", ")
                out.append("\(indent)  block\(i)(\(ins)) {")
                block(nested, indent: indent + "    ", maxValues: maxValues, into: &out)
                out.append("\(indent)  } -> (" + nested.outputs.map { "%" + $0 }.joined(separator: ", ") + ")")
            }
        }
    }
}
