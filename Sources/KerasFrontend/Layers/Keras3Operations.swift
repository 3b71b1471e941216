// Keras 3 operations recorded in a functional model: `keras.ops.add(x, 1.0)`, `x[:, 1:3]`,
// `keras.ops.mean(x, axis=-1)` on Keras tensors become entries whose class is the operation's
// (`Add`, `GetItem`, `Mean`, module `keras.src.ops.numpy` / `keras.src.ops.nn`) with the call's
// arguments in the inbound node and the constructor's in the config. Several share a class name
// with a layer (`Add`, `Multiply`, `Concatenate`, `Reshape`, `Softmax`, `Maximum`, …), whose
// semantics differ (`Add` the layer sums a list of tensors; the operation adds two values, one
// possibly a constant), so they are told apart first (`KerasOperationConverter.operation(for:)`).

import MLGraph

/// Converts Keras 3 operations through `PythonLowering` as calls of `keras.ops.<name>`.
struct KerasOperationConverter: KerasLayerConverter {
    /// Not registered by class name (the names collide with layers): see `operation(for:)`.
    var classNames: [String] { [] }
    var ops: Set<OpKind> { pythonLoweringOps }
    var minimumInputCount: Int { 0 }

    /// The converter when `layer` is a Keras 3 operation rather than a layer: its module is
    /// `keras.src.ops.*`, or (legacy .h5 configs drop the module) its call is a Keras 3 record and
    /// its config lacks the `trainable` / `dtype` entries every Keras 3 layer writes.
    /// Operations whose converter is registered for their own class (e.g. the mask operations
    /// `NotEqual`, `Any` in `KerasMaskOpConverter`) keep it; only names that are free or belong to
    /// a layer with other semantics are taken.
    static func operation(for layer: KerasLayerConfig) -> KerasOperationConverter? {
        let registered = KerasLayerRegistry.converter(for: layer.className) != nil
        guard !registered || layerClassesSharingOperationNames.contains(layer.className) else { return nil }
        if let m = layer.module { return m.hasPrefix("keras.src.ops") || m.hasPrefix("keras.ops") ? KerasOperationConverter() : nil }
        guard let call = layer.inboundNodes.first?.call, call["args"] != nil,
              let config = layer.config.object, config["trainable"] == nil, config["dtype"] == nil,
              functionName(layer.className) != nil else { return nil }
        return KerasOperationConverter()
    }

    /// Layer classes a Keras 3 operation class has the same name as.
    static let layerClassesSharingOperationNames: Set<String> = [
        "Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum", "Concatenate", "Reshape", "Softmax", "Dot", "Identity",
    ]

    /// `ExpandDims` → `expand_dims`; nil for names that are not CamelCase identifiers.
    static func functionName(_ className: String) -> String? {
        guard !className.isEmpty, className.allSatisfy({ $0.isLetter || $0.isNumber }) else { return nil }
        var out = ""
        for (i, ch) in className.enumerated() {
            if ch.isUppercase, i > 0 { out += "_" }
            out += ch.lowercased()
        }
        return out
    }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        guard let name = Self.functionName(ctx.className) else {
            throw ctx.unsupported("Keras 3 operation class '\(ctx.className)' is not a keras.ops function name", hint: "replace it with built-in Keras layers")
        }
        var call = try TFOpCallArguments(ctx)
        // Constructor arguments (axis, keepdims, newshape, x_min…) are keyword arguments of the function.
        for (k, v) in ctx.config.object ?? [:] where k != "name" {
            call.kwargs.append((k, .constant(PythonConstant(keras: v))))
        }
        return try lowerPythonCall(ctx, what: "keras.ops.\(name)") { (l: inout PythonLowering) throws(PythonLoweringFailure) -> LoweredValue in
            if name == "get_item" {
                guard call.args.count == 2 else { throw PythonLoweringFailure("get_item takes a tensor and a key") }
                var key = call.args[1]
                if case let .sequence(items, _) = key { key = .sequence(items, isTuple: true) }
                return try l.subscriptValue(call.args[0], key)
            }
            return try l.call("keras.ops." + name, args: call.args, kwargs: call.kwargs)
        }
    }
}
