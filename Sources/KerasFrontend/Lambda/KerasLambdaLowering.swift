// Automatic lowering of Keras `Lambda` layers: the function's bytecode (never executed) is read
// back into a Python expression (`PythonBytecodeEvaluator`), its parameters bound to the layer's
// inputs and to the values Keras stored in the config (`arguments`, `defaults`, `closure`), and
// the expression lowered to IR (`PythonLowering`).

import Foundation
import MLGraph

/// The expression a Keras `Lambda` layer computes, recovered from its stored bytecode.
///
/// ```swift
/// let e = try KerasLambdaExpression(layer: layer, kerasVersion: "2.21.0")
/// e.expression.description  // "(x + 1) * 127.5"
/// e.text                    // "lambda x: (x + 1) * 127.5"
/// ```
public struct KerasLambdaExpression: Sendable {
    /// The returned expression.
    public var expression: PythonExpression
    /// The function's parameters in signature order (the first receives the layer's input or
    /// list of inputs; `*args` / `**kwargs` keep their stars).
    public var parameters: [String]
    /// Values the config stores for parameters (`arguments`, then stored defaults) and closure
    /// variables, by name.
    public var parameterValues: [String: PythonConstant]
    public var closureValues: [String: PythonConstant]
    /// The function's name (`<lambda>` for a lambda).
    public var functionName: String

    /// "lambda x: (x + 1) * 127.5" (or "def rescale_output(x): return (x + 1) * 127.5" for a
    /// named function), with the known values of the other parameters and closure variables
    /// appended ("  where keepdims=True").
    public var text: String {
        var s = functionName == "<lambda>" || functionName.isEmpty
            ? "lambda " + parameters.joined(separator: ", ") + ": " + expression.description
            : "def \(functionName)(" + parameters.joined(separator: ", ") + "): return " + expression.description
        let bound = parameterValues.keys.sorted().filter { parameters.contains($0) }.map { "\($0)=\(parameterValues[$0]!)" }
            + closureValues.keys.sorted().map { "\($0)=\(closureValues[$0]!)" }
        if !bound.isEmpty { s += "  where " + bound.joined(separator: ", ") }
        return s
    }

    /// Recovers the expression of a `Lambda` layer.
    /// - Throws: `PythonExpressionFailure` saying why (no bytecode stored, not decodable, not a
    ///   pure expression).
    public init(layer: KerasLayerConfig, kerasVersion: String?) throws(PythonExpressionFailure) {
        guard layer.className == "Lambda" else { throw PythonExpressionFailure("not a Lambda layer") }
        let config = layer.config.foundationObject as? [String: Any] ?? [:]
        let stored = try KerasLambdaExpression.storedCode(config)
        let bytes: [UInt8]
        do { bytes = try LambdaFunctionDecoder.marshalBytes(fromStoredCode: stored.code) } catch {
            throw PythonExpressionFailure("the stored code is not decodable", cause: error)
        }
        var code: MarshalCode? = nil
        var traits = MarshalStreamTraits()
        for layout in LambdaFunctionDecoder.layoutOrder(firstByte: bytes.first, kerasVersion: kerasVersion) {
            var reader = MarshalReader(bytes: bytes, layout: layout)
            if let c = try? reader.readTopLevelCode() { code = c; traits = reader.traits; break }
        }
        guard let code else { throw PythonExpressionFailure("the stored bytecode is not a CPython 2.7–3.13 code object") }
        guard code.flags & 0x20 == 0, code.flags & 0x80 == 0, code.flags & 0x100 == 0, code.flags & 0x200 == 0 else {
            throw PythonExpressionFailure("the function is a generator or coroutine")
        }
        expression = try PythonBytecodeEvaluator.expression(of: code, versionGuess: PythonVersionGuess.guess(code, traits: traits))
        parameters = PythonCodeSummary.arguments(of: code)
        functionName = code.name
        var values: [String: PythonConstant] = [:]
        // Stored defaults belong to the last positional parameters.
        let positional = Array(code.varnames.prefix(code.argcount))
        if let defaults = stored.defaults, defaults.count <= positional.count {
            for (p, d) in zip(positional.suffix(defaults.count), defaults) { values[p] = PythonConstant(json: d) }
        }
        if let arguments = config["arguments"] as? [String: Any] {
            for (k, v) in arguments { values[k] = PythonConstant(json: v) }
        }
        parameterValues = values
        var closure: [String: PythonConstant] = [:]
        if let cells = stored.closure, cells.count == code.freevars.count {
            for (n, v) in zip(code.freevars, cells) { closure[n] = PythonConstant(json: v) }
        }
        closureValues = closure
    }

    /// The stored marshal text, defaults and closure of every form Keras writes.
    static func storedCode(_ config: [String: Any]) throws(PythonExpressionFailure) -> (code: String, defaults: [Any]?, closure: [Any]?) {
        let function = config["function"]
        func list(_ v: Any?) -> [Any]? { v as? [Any] }
        if let l = function as? [Any], let code = l.first as? String {
            return (code, l.count > 1 ? list(l[1]) : nil, l.count > 2 ? list(l[2]) : nil)
        }
        if let s = function as? String {
            if config["function_type"] as? String == "function" {
                throw PythonExpressionFailure("the function is saved by name ('\(s)'), so its code is not in the file")
            }
            return (s, nil, nil)
        }
        if let o = function as? [String: Any] {
            if o["class_name"] as? String == "__lambda__", let inner = o["config"] as? [String: Any] {
                if let code = inner["code"] as? String { return (code, list(inner["defaults"]), list(inner["closure"])) }
                if let v = inner["value"] as? [Any], let code = v.first as? String {
                    return (code, v.count > 1 ? list(v[1]) : nil, v.count > 2 ? list(v[2]) : nil)
                }
            }
            if let name = o["config"] as? String {
                throw PythonExpressionFailure("the function is saved by name ('\(name)'), so its code is not in the file")
            }
        }
        throw PythonExpressionFailure("the config stores no function code")
    }
}

/// Lowers Lambda layers whose function is a pure expression (see `KerasLambdaExpression`).
enum KerasLambdaLowering {
    /// The nodes of one call of a Lambda layer, or why it cannot be lowered.
    static func lower(_ ctx: KerasLayerContext) -> Result<[Node], PythonLoweringFailure> {
        let e: KerasLambdaExpression
        do { e = try KerasLambdaExpression(layer: ctx.layer, kerasVersion: ctx.kerasVersion.string) } catch {
            return .failure(PythonLoweringFailure(error.ownReason, cause: error.cause?.error))
        }
        guard ctx.outputNames.count == 1 else {
            return .failure(PythonLoweringFailure("the layer has \(ctx.outputNames.count) outputs; only single-output Lambdas are lowered"))
        }
        var lowering = PythonLowering(nodeName: ctx.nodeName, inputs: ctx.inputs, inputTypes: ctx.inputTypes)
        var bindings: [String: LoweredValue] = [:]
        guard let first = e.parameters.first, !first.hasPrefix("*") else {
            return .failure(PythonLoweringFailure("the function takes no positional parameter for the layer's input"))
        }
        bindings[first] = ctx.inputs.count == 1 ? .tensor(ctx.inputs[0]) : .sequence(ctx.inputs.map { .tensor($0) }, isTuple: false)
        for p in e.parameters.dropFirst() where !p.hasPrefix("*") {
            if let v = e.parameterValues[p] {
                bindings[p] = .constant(v)
            } else if p == "training" {
                bindings[p] = .constant(.bool(false))  // Keras passes training=False at inference
            } else if p == "mask" {
                bindings[p] = .constant(.none)
            }
        }
        let closure = e.closureValues.mapValues { LoweredValue.constant($0) }
        do {
            let v = try lowering.lower(e.expression, parameters: bindings, closure: closure)
            guard case let .tensor(t) = v else {
                return .failure(PythonLoweringFailure("the expression \(e.expression) gives \(lowering.describe(v)), not one tensor"))
            }
            return .success(lowering.finish(result: t, output: ctx.outputNames[0], finalName: ctx.nodeName))
        } catch {
            return .failure(error)
        }
    }
}
