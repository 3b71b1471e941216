// A small Graphviz DOT document: nodes, edges and nested clusters, rendered as DOT text.
// The DOT language: https://graphviz.org/doc/info/lang.html (quoted IDs escape `"` and `\`;
// a subgraph whose name starts with "cluster" is drawn as a box around its nodes).
import Foundation

/// A directed graph in the DOT language, built by `ModelPicture` and written by `GraphFileWriter`.
/// Node ids are generated (`n0`, `n1`, …) so that model names never need to be valid DOT ids;
/// every label is escaped when rendered.
public struct DotDocument: Sendable {
    /// How a node is drawn.
    public enum NodeStyle: String, Sendable {
        /// A layer or op: rounded box.
        case op
        /// A model input or output feature: ellipse.
        case feature
        /// A block's inputs or yielded values inside a control-flow cluster: small note.
        case port
        /// A whole model that has no layers (trees, GLMs, encoders, …): box with a double border.
        case model
        /// A statement about what is not drawn: plain text.
        case note
    }

    public struct Node: Sendable {
        public var id: String
        /// Lines of the label, first line the most important (name or type).
        public var lines: [String]
        public var style: NodeStyle
    }

    public struct Edge: Sendable {
        public var from: String
        public var to: String
        public var label: String?
    }

    /// A subgraph drawn as a box (`subgraph cluster_…`), holding nodes and further clusters.
    public final class Cluster: @unchecked Sendable {
        public let id: String
        public var label: String
        public var nodes: [Node] = []
        public var clusters: [Cluster] = []
        init(id: String, label: String) { self.id = id; self.label = label }
    }

    public var title: String
    public private(set) var edges: [Edge] = []
    /// The top level (not drawn as a box).
    public let root: Cluster
    private var counter = 0

    public init(title: String) {
        self.title = title
        root = Cluster(id: "root", label: title)
    }

    /// Adds a node to `cluster` (the top level when nil) and returns its id.
    @discardableResult
    public mutating func addNode(_ lines: [String], style: NodeStyle, in cluster: Cluster? = nil) -> String {
        let id = "n\(counter)"
        counter += 1
        (cluster ?? root).nodes.append(Node(id: id, lines: lines, style: style))
        return id
    }

    /// Adds a cluster inside `parent` (the top level when nil).
    public mutating func addCluster(_ label: String, in parent: Cluster? = nil) -> Cluster {
        let c = Cluster(id: "cluster_\(counter)", label: label)
        counter += 1
        (parent ?? root).clusters.append(c)
        return c
    }

    public mutating func addEdge(from: String, to: String, label: String? = nil) {
        edges.append(Edge(from: from, to: to, label: label))
    }

    /// All nodes, clusters included, in drawing order.
    public var allNodes: [Node] {
        func walk(_ c: Cluster) -> [Node] { c.nodes + c.clusters.flatMap(walk) }
        return walk(root)
    }

    /// All clusters (not the top level), depth first.
    public var allClusters: [Cluster] {
        func walk(_ c: Cluster) -> [Cluster] { c.clusters.flatMap { [$0] + walk($0) } }
        return walk(root)
    }

    /// The document as DOT text.
    public var text: String {
        var out = "digraph \(Self.quote(title)) {\n"
        out += "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=12, labelloc=t, label=\(Self.quote(title))];\n"
        out += "  node [fontname=\"Helvetica\", fontsize=10];\n"
        out += "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#555555\"];\n"
        func emit(_ c: Cluster, indent: String) {
            for n in c.nodes {
                out += indent + n.id + " [label=" + Self.quote(n.lines.joined(separator: "\n")) + ", " + Self.attributes(n.style) + "];\n"
            }
            for sub in c.clusters {
                out += indent + "subgraph " + sub.id + " {\n"
                out += indent + "  label=" + Self.quote(sub.label) + "; style=\"rounded\"; color=\"#7a8aa6\";\n"
                emit(sub, indent: indent + "  ")
                out += indent + "}\n"
            }
        }
        emit(root, indent: "  ")
        for e in edges {
            out += "  \(e.from) -> \(e.to)" + (e.label.map { " [label=" + Self.quote($0) + "]" } ?? "") + ";\n"
        }
        out += "}\n"
        return out
    }

    static func attributes(_ style: NodeStyle) -> String {
        switch style {
        case .op: return "shape=box, style=\"rounded,filled\", fillcolor=\"#e8eef9\""
        case .feature: return "shape=ellipse, style=filled, fillcolor=\"#fdf1d6\""
        case .port: return "shape=note, style=filled, fillcolor=\"#f2f2f2\", fontsize=9"
        case .model: return "shape=box, peripheries=2, style=filled, fillcolor=\"#e3f4e1\""
        case .note: return "shape=plaintext, fontcolor=\"#666666\""
        }
    }

    /// A DOT quoted string: `"` and `\` escaped, line breaks as `\n` (centred lines).
    static func quote(_ s: String) -> String {
        var r = "\""
        for ch in s {
            switch ch {
            case "\"": r += "\\\""
            case "\\": r += "\\\\"
            case "\n": r += "\\n"
            case "\r": break
            default: r.append(ch)
            }
        }
        return r + "\""
    }
}
