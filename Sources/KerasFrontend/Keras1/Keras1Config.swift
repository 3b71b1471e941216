/// Translates Keras 1.x model configs into the Keras 2 form the layer converters read, the way
/// Keras 2.0–2.2 accepted them: its `keras/legacy/interfaces.py` renamed the Keras 1 constructor
/// arguments (`output_dim` → `units`, `nb_filter` → `filters`, `border_mode` → `padding`,
/// `dim_ordering` 'th'/'tf' → `data_format` 'channels_first'/'channels_last', …) and
/// `keras/legacy/layers.py` kept the Keras 1 classes that have no Keras 2 counterpart (`Merge`,
/// `AtrousConvolution1D/2D` as Conv1D/Conv2D with `dilation_rate`).
///
/// This is the single place where Keras 1 configs are recognized; the weights that go with them
/// (one array per gate, Theano-ordered kernels) are converted by `Keras1Weights`.
///
/// What changes:
/// - class names: Convolution1D/2D/3D, AtrousConvolution1D/2D, Deconvolution2D,
///   SeparableConvolution2D → Conv1D/Conv2D/Conv3D/Conv2DTranspose/SeparableConv2D;
///   TimeDistributedDense → Dense (Keras 2's Dense already applies to the last axis);
/// - arguments, per class, as the legacy interfaces list them; regularizers, constraints and
///   initializers are dropped (they do not change inference);
/// - `input_dim` / `input_length` of a first layer without `batch_input_shape` become one;
/// - a Keras 1 `Sequential` whose first layer is a `Merge` of models (`Merge([m1, m2], mode=…)`)
///   becomes a functional model: each merged Sequential's layers inline (so their weights keep the
///   file's flattened order, Keras 1's `flattened_layers`), one input per branch, the `Merge`
///   reading the branches' outputs, then the remaining layers.
/// Keras 2 and 3 configs pass through unchanged (only Keras 1 names and keys are rewritten).
enum Keras1Config {
    /// Keras 1 class name → Keras 2 class name.
    static let classRenames: [String: String] = [
        "Convolution1D": "Conv1D", "AtrousConvolution1D": "Conv1D",
        "Convolution2D": "Conv2D", "AtrousConvolution2D": "Conv2D",
        "Convolution3D": "Conv3D",
        "Deconvolution2D": "Conv2DTranspose",
        "SeparableConvolution2D": "SeparableConv2D",
        "TimeDistributedDense": "Dense",
    ]

    /// Argument renames common to the layers whose legacy interface lists them.
    private static let dense: [(String, String)] = [("output_dim", "units"), ("bias", "use_bias")]
    private static let conv: [(String, String)] = [
        ("nb_filter", "filters"), ("subsample", "strides"), ("border_mode", "padding"),
        ("dim_ordering", "data_format"), ("bias", "use_bias"), ("atrous_rate", "dilation_rate"),
    ]
    private static let conv1D: [(String, String)] = [
        ("nb_filter", "filters"), ("filter_length", "kernel_size"), ("subsample_length", "strides"),
        ("border_mode", "padding"), ("bias", "use_bias"), ("atrous_rate", "dilation_rate"),
    ]
    private static let recurrent: [(String, String)] = [
        ("output_dim", "units"), ("inner_activation", "recurrent_activation"), ("dropout_W", "dropout"),
        ("dropout_U", "recurrent_dropout"), ("consume_less", "implementation"),
    ]
    private static let pooling1D: [(String, String)] = [("pool_length", "pool_size"), ("stride", "strides"), ("border_mode", "padding")]
    private static let pooling: [(String, String)] = [("border_mode", "padding"), ("dim_ordering", "data_format")]
    private static let ordering: [(String, String)] = [("dim_ordering", "data_format")]
    private static let dropout: [(String, String)] = [("p", "rate"), ("dim_ordering", "data_format")]

    /// Keys Keras 1 wrote that no converter reads (initializers, regularizers, constraints).
    private static let dropped: Set<String> = [
        "init", "inner_init", "forget_bias_init", "W_regularizer", "U_regularizer", "b_regularizer",
        "W_constraint", "U_constraint", "b_constraint", "beta_init", "gamma_init", "gamma_regularizer",
        "beta_regularizer", "output_shape_type_keras1",
    ]

    /// The Keras 2 renames of a (Keras 2) class name's Keras 1 arguments.
    private static func renames(for className: String) -> [(String, String)] {
        switch className {
        case "Dense": return dense
        case "Conv2D", "Conv2DTranspose", "SeparableConv2D", "Conv3D", "ConvLSTM2D": return conv
        case "Conv1D": return conv1D
        case "LSTM", "GRU", "SimpleRNN": return recurrent
        case "MaxPooling1D", "AveragePooling1D": return pooling1D
        case "MaxPooling2D", "AveragePooling2D", "MaxPooling3D", "AveragePooling3D": return pooling
        case "GlobalMaxPooling2D", "GlobalAveragePooling2D", "GlobalMaxPooling3D", "GlobalAveragePooling3D",
             "UpSampling2D", "UpSampling3D", "ZeroPadding2D", "ZeroPadding3D", "Cropping2D", "Cropping3D":
            return ordering
        case "Dropout", "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D", "GaussianDropout": return dropout
        case "GaussianNoise": return [("sigma", "stddev")]
        case "UpSampling1D": return [("length", "size")]
        case "PReLU": return [("init", "alpha_initializer")]
        default: return []
        }
    }

    /// Whether a layer config uses Keras 1 names (its class or one of its arguments).
    static func isKeras1(className: String, config: KerasJSON) -> Bool {
        if classRenames[className] != nil || className == "Merge" { return true }
        guard let o = config.object else { return false }
        let markers = ["output_dim", "nb_filter", "border_mode", "dim_ordering", "subsample", "filter_length",
                       "pool_length", "inner_activation", "consume_less", "input_dtype"]
        if className != "Embedding", markers.contains(where: { o[$0] != nil }) { return true }
        // A Keras 1 argument name of this class without its Keras 2 name (Dropout `p`, …).
        if renames(for: classRenames[className] ?? className).contains(where: { o[$0.0] != nil && o[$0.1] == nil }) { return true }
        return className == "Embedding" && (o["input_dtype"] != nil || o["W_regularizer"] != nil)
    }

    /// Translates a model config (`{"class_name", "config"}`, as in `model_config` or
    /// `model.to_json()`); anything that is not a Keras 1 config is returned unchanged.
    static func translate(_ json: KerasJSON) -> KerasJSON {
        guard case var .object(root) = json, let cls = root["class_name"]?.string else { return json }
        let config = root["config"] ?? .null
        switch cls {
        case "Sequential":
            let entries: [KerasJSON]
            var seqName: KerasJSON? = nil
            if let a = config.array { entries = a } else if let a = config["layers"]?.array {
                entries = a; seqName = config["name"]
            } else { return json }
            if let first = entries.first, first["class_name"]?.string == "Merge", first["config"]?["layers"]?.array != nil,
               let functional = sequentialWithMerge(entries, name: seqName?.string ?? "sequential") {
                return functional
            }
            let translated = KerasJSON.array(entries.map(translateLayerEntry))
            if let seqName {
                guard case var .object(c) = config else { return json }
                c["layers"] = translated
                c["name"] = seqName
                root["config"] = .object(c)
            } else {
                root["config"] = translated
            }
            return .object(root)
        case "Model", "Functional":
            guard case var .object(c) = config, let layers = c["layers"]?.array else { return json }
            c["layers"] = .array(layers.map(translateLayerEntry))
            root["config"] = .object(c)
            return .object(root)
        default:
            return json
        }
    }

    /// Translates one layer entry `{"class_name", "config", …}` (nested models and wrapped
    /// layers included), keeping its other keys (`name`, `inbound_nodes`).
    static func translateLayerEntry(_ entry: KerasJSON) -> KerasJSON {
        guard case var .object(e) = entry, let cls = e["class_name"]?.string else { return entry }
        if KerasModelConfig.modelClassNames.contains(cls) { return translate(entry) }
        let config = e["config"] ?? .object([:])
        let (newClass, newConfig) = translateLayer(className: cls, config: config)
        e["class_name"] = .string(newClass)
        e["config"] = newConfig
        return .object(e)
    }

    /// Translates one layer's class name and config (wrapped layers of Bidirectional and
    /// TimeDistributed too); unchanged when it has no Keras 1 names.
    static func translateLayer(className cls: String, config: KerasJSON) -> (String, KerasJSON) {
        guard var c = config.object else { return (cls, config) }
        if cls == "Bidirectional" || cls == "TimeDistributed", let inner = c["layer"] {
            c["layer"] = translateLayerEntry(inner)
            if let d = c["input_dtype"] { c["dtype"] = d; c["input_dtype"] = nil }
            return (cls, .object(c))
        }
        guard isKeras1(className: cls, config: config) else { return (cls, config) }
        let newClass = classRenames[cls] ?? cls
        for (old, new) in renames(for: newClass) where c[old] != nil {
            if c[new] == nil { c[new] = c[old] }
            c[old] = nil
        }
        for k in dropped { c[k] = nil }
        if let d = c["input_dtype"] { if c["dtype"] == nil { c["dtype"] = d }; c["input_dtype"] = nil }
        // dim_ordering values ('default' means the keras.json setting, i.e. Keras 2's default).
        if let f = c["data_format"]?.string {
            switch f {
            case "th": c["data_format"] = .string("channels_first")
            case "tf": c["data_format"] = .string("channels_last")
            case "default": c["data_format"] = nil
            default: break
            }
        }
        switch newClass {
        case "Conv2D", "Conv2DTranspose", "SeparableConv2D", "ConvLSTM2D":
            if c["kernel_size"] == nil, let r = c["nb_row"], let k = c["nb_col"] { c["kernel_size"] = .array([r, k]) }
            c["nb_row"] = nil; c["nb_col"] = nil
            if newClass == "Conv2DTranspose" { c["output_shape"] = nil }
        case "Conv3D":
            if c["kernel_size"] == nil, let a = c["kernel_dim1"], let b = c["kernel_dim2"], let d = c["kernel_dim3"] {
                c["kernel_size"] = .array([a, b, d])
            }
            for k in ["kernel_dim1", "kernel_dim2", "kernel_dim3"] { c[k] = nil }
        case "ZeroPadding2D":
            // Keras 1.2: (top, bottom, left, right) or {"top_pad": …}.
            if let a = c["padding"]?.array, a.count == 4 {
                c["padding"] = .array([.array([a[0], a[1]]), .array([a[2], a[3]])])
            } else if let o = c["padding"]?.object {
                let v = { (k: String) in o[k] ?? .number(0) }
                c["padding"] = .array([.array([v("top_pad"), v("bottom_pad")]), .array([v("left_pad"), v("right_pad")])])
            }
        case "ZeroPadding1D":
            if let o = c["padding"]?.object {
                c["padding"] = .array([o["left_pad"] ?? .number(0), o["right_pad"] ?? .number(0)])
            }
        case "LSTM", "GRU", "SimpleRNN":
            // consume_less 'cpu'/'mem'/'gpu' → implementation 0/1/2 (no effect on inference).
            if let s = c["implementation"]?.string { c["implementation"] = .number(s == "gpu" ? 2 : s == "mem" ? 1 : 0) }
        default:
            break
        }
        // A first layer's input shape from `input_dim` / `input_length` (Keras 1 wrote
        // `batch_input_shape` for first layers; older configs may only have these).
        if c["batch_input_shape"] == nil, c["input_shape"] == nil, let dim = c["input_dim"], !dim.isNull {
            switch newClass {
            case "Dense": c["batch_input_shape"] = .array([.null, dim])
            case "LSTM", "GRU", "SimpleRNN", "Conv1D": c["batch_input_shape"] = .array([.null, c["input_length"] ?? .null, dim])
            default: break
            }
        }
        if newClass != "Embedding" { c["input_dim"] = nil; c["input_length"] = nil }
        return (newClass, .object(c))
    }

    /// A Keras 1 Sequential whose first layer merges models → a functional ("Model") config, or
    /// nil when a merged branch is not a Sequential (left to the converter to report).
    static func sequentialWithMerge(_ entries: [KerasJSON], name: String) -> KerasJSON? {
        var layers: [KerasJSON] = []
        var inputs: [KerasJSON] = []
        var used = Set<String>()
        func ref(_ n: String) -> KerasJSON { .array([.string(n), .number(0), .number(0)]) }
        func layerName(_ e: KerasJSON) -> String? { e["name"]?.string ?? e["config"]?["name"]?.string }

        /// Inlines a Sequential's layer entries (which may start with a Merge of models itself);
        /// returns the name of its last layer.
        func inline(_ list: [KerasJSON]) -> String? {
            guard let first = list.first else { return nil }
            var previous: [String]
            var rest = list[...]
            if first["class_name"]?.string == "Merge", let branches = first["config"]?["layers"]?.array {
                var outs: [String] = []
                for b in branches {
                    guard b["class_name"]?.string == "Sequential" else { return nil }
                    let inner = b["config"]?.array ?? b["config"]?["layers"]?.array ?? []
                    guard let o = inline(inner) else { return nil }
                    outs.append(o)
                }
                guard case var .object(m) = first, case var .object(mc) = m["config"] ?? .null, let mname = layerName(first) else { return nil }
                mc["layers"] = nil
                m["config"] = .object(mc)
                m["name"] = .string(mname)
                m["inbound_nodes"] = .array([.array(outs.map(ref))])
                layers.append(.object(m)); used.insert(mname)
                previous = [mname]
                rest = list.dropFirst()
            } else {
                guard let fname = layerName(first) else { return nil }
                // The input layer Keras 1 made for a Sequential: "<first layer>_input".
                let (_, cfg) = translateLayer(className: first["class_name"]?.string ?? "", config: first["config"] ?? .null)
                var inputName = fname + "_input"
                while used.contains(inputName) { inputName += "_" }
                var ic: [String: KerasJSON] = ["name": .string(inputName)]
                if let s = cfg["batch_input_shape"] { ic["batch_input_shape"] = s }
                if let d = cfg["dtype"] { ic["dtype"] = d }
                layers.append(.object(["class_name": .string("InputLayer"), "name": .string(inputName), "config": .object(ic),
                                       "inbound_nodes": .array([])]))
                used.insert(inputName)
                inputs.append(ref(inputName))
                previous = [inputName]
            }
            for e in rest {
                guard let n = layerName(e), case var .object(o) = translateLayerEntry(e) else { return nil }
                if case var .object(c) = o["config"] ?? .null { c["batch_input_shape"] = nil; o["config"] = .object(c) }
                o["name"] = .string(n)
                o["inbound_nodes"] = .array([.array(previous.map(ref))])
                layers.append(.object(o)); used.insert(n)
                previous = [n]
            }
            return previous.first
        }
        guard let out = inline(entries) else { return nil }
        return .object(["class_name": .string("Model"),
                        "config": .object(["name": .string(name), "layers": .array(layers),
                                           "input_layers": .array(inputs), "output_layers": .array([ref(out)])])])
    }
}
