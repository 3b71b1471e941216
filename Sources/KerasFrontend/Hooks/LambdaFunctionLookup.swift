import Foundation

/// The Python function of a `Lambda` layer as hooks match it and error messages describe it:
/// recovered with `LambdaFunctionDecoder` (Keras 1/2 marshalled bytecode of CPython 2.7–3.13,
/// functions saved by name, Keras 3 references and `__lambda__` code) without running Python,
/// falling back to the cheap string scan of `KerasLambdaInfo` when the decoder cannot read the
/// stored code.
public struct KerasLambdaFunction: Hashable, Sendable {
    /// The function's name (`res_crop`; `<lambda>` for an anonymous lambda), nil when the config
    /// does not reveal it.
    public var name: String?
    /// One line for messages: "Python function res_crop(x) from make_model.py:31, CPython 3.11–3.12
    /// (marshalled bytecode); constants 2, -2".
    public var summary: String
    /// The decoder's full result, nil when it failed (then `name` and `summary` come from
    /// `KerasLambdaInfo`).
    public var info: LambdaFunctionInfo?

    /// Reads the function of a `Lambda` layer; nil for layers of other classes.
    /// - Parameters:
    ///   - layer: the layer config.
    ///   - kerasVersion: the file's Keras version string ("2.21.0"), which orders the CPython
    ///     layouts tried; nil when unknown.
    public init?(layer: KerasLayerConfig, kerasVersion: String? = nil) {
        guard layer.className == "Lambda" else { return nil }
        do {
            let info = try LambdaFunctionDecoder.decode(config: layer.config.foundationObject as? [String: Any] ?? [:],
                                                        kerasVersion: kerasVersion)
            self.info = info
            name = info.functionName
            summary = info.summary
        } catch {
            let cheap = KerasLambdaInfo(layer: layer)
            info = nil
            name = cheap?.functionName
            summary = (cheap?.description ?? "a Python function") + " (not decodable: \(error))"
        }
    }
}

extension KerasJSON {
    /// The value as `JSONSerialization` would give it (`[String: Any]`, `[Any]`, `String`,
    /// `NSNumber`, `NSNull`), for APIs taking Foundation JSON.
    var foundationObject: Any {
        switch self {
        case .null: return NSNull()
        case let .bool(b): return NSNumber(value: b)
        case let .number(d): return NSNumber(value: d)
        case let .string(s): return s
        case let .array(a): return a.map(\.foundationObject)
        case let .object(o): return o.mapValues(\.foundationObject)
        }
    }
}

extension LayerHook.Pattern {
    /// How specific a match by this pattern is, most specific first: 0 exact layer name, 1 glob on
    /// the layer name, 2 Lambda function name, 3 Keras class name, 4 any layer. The converter tries
    /// the hooks matching a layer in this order (then in their order in
    /// `KerasConversionOptions.hooks`), so `--lower res_crop_3=…` beats `--lower res_crop=…`
    /// for layer `res_crop_3` whatever the order they were given in.
    public var precedence: Int {
        switch self {
        case .name: return 0
        case .glob: return 1
        case .lambdaFunction: return 2
        case .className: return 3
        case .any: return 4
        }
    }
}

/// The class name without a Keras 3 registration package (`mlconv>ReflectionPadding2D` →
/// `ReflectionPadding2D`).
func bareKerasClassName(_ name: String) -> String {
    name.split(separator: ">").last.map(String.init) ?? name
}
