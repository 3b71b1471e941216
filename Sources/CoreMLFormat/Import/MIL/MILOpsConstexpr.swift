// MIL constexpr_* ops (compressed weights): evaluated once at import into float constants.
import MLGraph

enum MILConstexprOps {
    static var mappers: [String: MILOpMapper] { [:] }
}
