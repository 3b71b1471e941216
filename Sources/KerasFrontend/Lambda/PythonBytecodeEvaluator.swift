// Recovers the expression a Python function returns from its bytecode, symbolically: a stack of
// expression trees instead of values. Nothing is executed, and only straight-line code made of
// loads, arithmetic, subscripts, tuple/list/slice building, calls, stores to locals and one
// return is accepted (no jumps, loops, comprehensions, imports or attribute stores). Opcode
// numbers differ per CPython version; the tables below list the ones this evaluator knows, as
// CPython's `opcode.opmap` of 2.7, 3.6–3.10, 3.11, 3.12 and 3.13 gives them (3.0–3.5 share the
// 3.6 numbers with 1- or 3-byte instructions).
//
// Everything read is untrusted: instruction count, stack depth and expression size are bounded,
// and every index (constants, names, locals) is checked.

import Diagnostics
import Foundation

/// Why a function's bytecode is not a pure expression this evaluator can recover.
public struct PythonExpressionFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// What stopped the recovery ("instruction JUMP_FORWARD at offset 12: control flow is not a
    /// pure expression"), followed by the underlying error's text when there is one.
    public var reason: String { ownReason + cause.suffix }
    /// `reason` without the underlying error's text.
    public var ownReason: String
    /// The underlying error (a `LambdaDecodingError` of stored code that is not decodable), kept
    /// as a value (issue 13).
    public var cause: DiagnosticCause?
    public var description: String { reason }
    init(_ reason: String, cause: (any Error)? = nil) { ownReason = reason; self.cause = cause.map(DiagnosticCause.init) }
}

/// The semantic instructions the evaluator knows.
enum PythonInstruction: Hashable {
    case loadFast, loadConst, loadGlobal, loadName, loadAttr, loadMethod, loadDeref, storeFast
    case loadFastLoadFast
    case binary(PythonBinaryOperator), binaryOp, binarySubscr, binarySlice
    case slice0, slice1, slice2, slice3
    case buildSlice, buildTuple, buildList, listExtend, listToTuple
    /// CPython ≤ 3.5: arg = positional count | keyword count << 8.
    case callFunctionOld
    /// CPython 3.6–3.10: arg = positional count.
    case callFunction, callFunctionKW, callMethod
    /// CPython 3.11+.
    case call, callKW, kwNames, pushNull
    case returnValue, returnConst
    case unary(PythonUnaryOperator), callIntrinsic1
    /// No effect on the expression (RESUME, NOP, PRECALL, COPY_FREE_VARS, MAKE_CELL, CACHE).
    case noEffect
    case extendedArg
}

/// The opcode numbering and instruction format of one family of CPython versions.
struct PythonOpcodeTable: Sendable {
    var name: String
    /// 2-byte instructions (3.6+) rather than 1 or 3 bytes.
    var wordcode: Bool
    /// LOAD_GLOBAL's argument is `index << 1 | pushNull` (3.11+).
    var globalHasNullBit: Bool
    /// LOAD_ATTR's argument is `index << 1 | isMethod` (3.12+).
    var attrHasMethodBit: Bool
    /// LOAD_DEREF indexes the merged locals (3.11+) instead of cellvars + freevars.
    var derefIndexesLocals: Bool
    var ops: [Int: PythonInstruction]

    static let common2and3: [Int: PythonInstruction] = [
        124: .loadFast, 100: .loadConst, 116: .loadGlobal, 101: .loadName, 106: .loadAttr, 136: .loadDeref, 125: .storeFast,
        23: .binary(.add), 24: .binary(.subtract), 20: .binary(.multiply), 27: .binary(.trueDivide),
        26: .binary(.floorDivide), 22: .binary(.modulo), 19: .binary(.power),
        55: .binary(.add), 56: .binary(.subtract), 57: .binary(.multiply), 29: .binary(.trueDivide),
        28: .binary(.floorDivide), 59: .binary(.modulo), 67: .binary(.power),
        25: .binarySubscr, 133: .buildSlice, 102: .buildTuple, 103: .buildList,
        83: .returnValue, 11: .unary(.negative), 10: .unary(.positive), 15: .unary(.invert), 9: .noEffect,
    ]

    /// CPython 2.7 (BINARY_DIVIDE on tensors is true division; SLICE+n for simple slices).
    static let python27: PythonOpcodeTable = {
        var ops = common2and3
        ops[21] = .binary(.trueDivide); ops[58] = .binary(.trueDivide)
        ops[30] = .slice0; ops[31] = .slice1; ops[32] = .slice2; ops[33] = .slice3
        ops[131] = .callFunctionOld; ops[145] = .extendedArg
        return PythonOpcodeTable(name: "2.7", wordcode: false, globalHasNullBit: false, attrHasMethodBit: false,
                                 derefIndexesLocals: false, ops: ops)
    }()

    /// CPython 3.0–3.5 (3-byte instructions with arguments).
    static let python30to35: PythonOpcodeTable = {
        var ops = common2and3
        ops[16] = .binary(.matrixMultiply); ops[17] = .binary(.matrixMultiply)
        ops[131] = .callFunctionOld; ops[144] = .extendedArg
        return PythonOpcodeTable(name: "3.0–3.5", wordcode: false, globalHasNullBit: false, attrHasMethodBit: false,
                                 derefIndexesLocals: false, ops: ops)
    }()

    /// CPython 3.6–3.10 (wordcode; LOAD_METHOD / CALL_METHOD from 3.7, LIST_EXTEND from 3.9).
    static let python36to310: PythonOpcodeTable = {
        var ops = common2and3
        ops[16] = .binary(.matrixMultiply); ops[17] = .binary(.matrixMultiply)
        ops[131] = .callFunction; ops[141] = .callFunctionKW; ops[160] = .loadMethod; ops[161] = .callMethod
        ops[162] = .listExtend; ops[82] = .listToTuple; ops[144] = .extendedArg
        return PythonOpcodeTable(name: "3.6–3.10", wordcode: true, globalHasNullBit: false, attrHasMethodBit: false,
                                 derefIndexesLocals: false, ops: ops)
    }()

    static let python311: PythonOpcodeTable = PythonOpcodeTable(
        name: "3.11", wordcode: true, globalHasNullBit: true, attrHasMethodBit: false, derefIndexesLocals: true,
        ops: [0: .noEffect, 151: .noEffect, 9: .noEffect, 149: .noEffect, 135: .noEffect, 166: .noEffect,
              124: .loadFast, 100: .loadConst, 116: .loadGlobal, 101: .loadName, 106: .loadAttr, 160: .loadMethod,
              137: .loadDeref, 125: .storeFast, 122: .binaryOp, 25: .binarySubscr, 133: .buildSlice, 102: .buildTuple,
              103: .buildList, 162: .listExtend, 82: .listToTuple, 171: .call, 172: .kwNames, 2: .pushNull,
              83: .returnValue, 11: .unary(.negative), 10: .unary(.positive), 15: .unary(.invert), 144: .extendedArg])

    static let python312: PythonOpcodeTable = PythonOpcodeTable(
        name: "3.12", wordcode: true, globalHasNullBit: true, attrHasMethodBit: true, derefIndexesLocals: true,
        ops: [0: .noEffect, 151: .noEffect, 9: .noEffect, 149: .noEffect, 135: .noEffect,
              124: .loadFast, 127: .loadFast, 100: .loadConst, 116: .loadGlobal, 101: .loadName, 106: .loadAttr,
              137: .loadDeref, 125: .storeFast, 122: .binaryOp, 25: .binarySubscr, 26: .binarySlice, 133: .buildSlice,
              102: .buildTuple, 103: .buildList, 162: .listExtend, 171: .call, 172: .kwNames, 2: .pushNull,
              83: .returnValue, 121: .returnConst, 11: .unary(.negative), 15: .unary(.invert), 173: .callIntrinsic1,
              144: .extendedArg])

    static let python313: PythonOpcodeTable = PythonOpcodeTable(
        name: "3.13", wordcode: true, globalHasNullBit: true, attrHasMethodBit: true, derefIndexesLocals: true,
        ops: [0: .noEffect, 149: .noEffect, 30: .noEffect, 62: .noEffect, 94: .noEffect,
              85: .loadFast, 87: .loadFast, 88: .loadFastLoadFast, 83: .loadConst, 91: .loadGlobal, 92: .loadName,
              82: .loadAttr, 84: .loadDeref, 110: .storeFast, 45: .binaryOp, 5: .binarySubscr, 4: .binarySlice,
              50: .buildSlice, 52: .buildTuple, 47: .buildList, 81: .listExtend, 53: .call, 57: .callKW, 34: .pushNull,
              36: .returnValue, 103: .returnConst, 42: .unary(.negative), 41: .unary(.invert), 55: .callIntrinsic1,
              71: .extendedArg])

    /// BINARY_OP's argument (3.11+): NB_ADD … NB_XOR, then the in-place forms 13…25.
    static let binaryOpArguments: [PythonBinaryOperator?] = [
        .add, .and, .floorDivide, .lshift, .matrixMultiply, .multiply, .modulo, .or, .power, .rshift, .subtract,
        .trueDivide, .xor,
    ]
}

/// CPython 2 `str` values (bytes in the marshal stream) as text, inside tuples too.
func python2Text(_ v: MarshalValue, depth: Int = 0) -> MarshalValue {
    guard depth < 50 else { return v }
    switch v {
    case let .bytes(b): return .str(String(decoding: b, as: UTF8.self))
    case let .tuple(items): return .tuple(items.map { python2Text($0, depth: depth + 1) })
    default: return v
    }
}

/// Recovers `PythonExpression`s from code objects.
public enum PythonBytecodeEvaluator {
    /// Most instructions decoded per function.
    static let maxInstructions = 4096
    /// Deepest evaluation stack.
    static let maxStackDepth = 256
    /// Most expression nodes in a result (shared subtrees counted each time they are used).
    static let maxExpressionSize = 4096

    /// The expression returned by a marshalled function, trying the opcode tables its layout and
    /// bytecode allow; when several read it, they must agree.
    static func expression(of code: MarshalCode, versionGuess: String) throws(PythonExpressionFailure) -> PythonExpression {
        var candidates: [PythonOpcodeTable]
        switch code.layout {
        case .python2: candidates = [.python27]
        case .python30to37:
            let b = code.code
            let isWordcode = b.count >= 2 && b.count % 2 == 0 && b[b.count - 2] == 83 && b.last == 0
            candidates = isWordcode ? [.python36to310] : [.python30to35]
        case .python38to310: candidates = [.python36to310]
        case .python311plus:
            switch versionGuess {
            case "3.11": candidates = [.python311]
            case "3.12": candidates = [.python312]
            case "3.11–3.12": candidates = [.python311, .python312]
            case "3.13": candidates = [.python313]
            case "3.14+":
                throw PythonExpressionFailure("CPython 3.14 bytecode is not read yet (its opcodes were renumbered)")
            default: candidates = [.python311, .python312, .python313]
            }
        }
        var results: [PythonExpression] = []
        var failures: [String] = []
        for table in candidates {
            do { results.append(try evaluate(code, table: table)) } catch {
                failures.append(candidates.count > 1 ? "as CPython \(table.name): \(error.reason)" : error.reason)
            }
        }
        guard let first = results.first else { throw PythonExpressionFailure(failures.joined(separator: "; ")) }
        guard results.allSatisfy({ $0 == first }) else {
            throw PythonExpressionFailure("the bytecode reads differently as CPython \(candidates.map(\.name).joined(separator: " and ")), which its layout does not tell apart")
        }
        return first
    }

    private struct Item {
        var expr: PythonExpression?  // nil: NULL
        var size: Int
    }

    /// Decodes (opcode, argument, offset) triples, EXTENDED_ARG folded in.
    private static func instructions(_ code: [UInt8], table: PythonOpcodeTable) throws(PythonExpressionFailure) -> [(op: Int, arg: Int, offset: Int)] {
        var out: [(Int, Int, Int)] = []
        var i = 0
        var ext = 0
        while i < code.count {
            guard out.count < maxInstructions else {
                throw PythonExpressionFailure("more than \(maxInstructions) instructions")
            }
            let offset = i
            let op = Int(code[i])
            var arg = 0
            if table.wordcode {
                guard i + 1 < code.count else { throw PythonExpressionFailure("truncated instruction at offset \(i)") }
                arg = ext << 8 | Int(code[i + 1])
                i += 2
            } else if op >= 90 {
                guard i + 2 < code.count else { throw PythonExpressionFailure("truncated instruction at offset \(i)") }
                arg = ext << 16 | Int(code[i + 1]) | Int(code[i + 2]) << 8
                i += 3
            } else {
                i += 1
            }
            guard arg < 1 << 30 else { throw PythonExpressionFailure("instruction argument too large at offset \(offset)") }
            if table.ops[op] == .extendedArg { ext = arg; continue }
            ext = 0
            out.append((op, arg, offset))
        }
        return out
    }

    /// Evaluates the code with one opcode table.
    static func evaluate(_ code: MarshalCode, table: PythonOpcodeTable) throws(PythonExpressionFailure) -> PythonExpression {
        var stack: [Item] = []
        var locals: [Int: Item] = [:]
        var kwNames: [String]? = nil
        let argumentCount = code.argcount + code.kwonlyargcount + (code.flags & 0x04 != 0 ? 1 : 0) + (code.flags & 0x08 != 0 ? 1 : 0)
        let parameters = Array(code.varnames.prefix(argumentCount))
        let derefNames: [String] = table.derefIndexesLocals ? code.varnames : code.cellvars + code.freevars

        func fail(_ why: String, _ offset: Int) -> PythonExpressionFailure {
            PythonExpressionFailure("\(why) (at bytecode offset \(offset))")
        }
        func push(_ e: PythonExpression?, size: Int, _ offset: Int) throws(PythonExpressionFailure) {
            guard stack.count < maxStackDepth else { throw fail("evaluation stack deeper than \(maxStackDepth)", offset) }
            guard size <= maxExpressionSize else { throw fail("expression larger than \(maxExpressionSize) nodes", offset) }
            stack.append(Item(expr: e, size: size))
        }
        func pop(_ offset: Int) throws(PythonExpressionFailure) -> Item {
            guard let top = stack.popLast() else { throw fail("stack underflow", offset) }
            return top
        }
        func popValue(_ offset: Int) throws(PythonExpressionFailure) -> (PythonExpression, Int) {
            let it = try pop(offset)
            guard let e = it.expr else { throw fail("unexpected NULL on the stack", offset) }
            return (e, it.size)
        }
        func popValues(_ n: Int, _ offset: Int) throws(PythonExpressionFailure) -> ([PythonExpression], Int) {
            guard n >= 0, n <= stack.count else { throw fail("stack underflow", offset) }
            var items: [PythonExpression] = []
            var size = 0
            for it in stack.suffix(n) {
                guard let e = it.expr else { throw fail("unexpected NULL on the stack", offset) }
                items.append(e)
                size += it.size
            }
            stack.removeLast(n)
            return (items, size)
        }
        func constant(_ i: Int, _ offset: Int) throws(PythonExpressionFailure) -> PythonConstant {
            guard i >= 0, i < code.consts.count else { throw fail("constant index \(i) out of range", offset) }
            if case .code = code.consts[i] { throw fail("a nested function, lambda or comprehension is not a pure expression", offset) }
            // CPython 2 `str` constants (keyword names, strings) are marshalled as bytes.
            if code.layout == .python2 { return PythonConstant(python2Text(code.consts[i])) }
            return PythonConstant(code.consts[i])
        }
        func name(_ i: Int, _ offset: Int) throws(PythonExpressionFailure) -> String {
            guard i >= 0, i < code.names.count else { throw fail("name index \(i) out of range", offset) }
            return code.names[i]
        }
        func local(_ i: Int, _ offset: Int) throws(PythonExpressionFailure) -> Item {
            if let v = locals[i] { return v }
            guard i >= 0, i < code.varnames.count else { throw fail("local index \(i) out of range", offset) }
            guard i < parameters.count else { throw fail("local '\(code.varnames[i])' is read before it is assigned", offset) }
            return Item(expr: .parameter(parameters[i]), size: 1)
        }
        /// Pops a callable and its NULL partner (3.7+ method calls, 3.11+ calls), either order.
        func popCallable(withNull: Bool, _ offset: Int) throws(PythonExpressionFailure) -> (PythonExpression, Int) {
            if !withNull { return try popValue(offset) }
            let a = try pop(offset), b = try pop(offset)
            switch (b.expr, a.expr) {
            case let (nil, f?): return (f, a.size)
            case let (f?, nil): return (f, b.size)
            default: throw fail("a call whose callable is not a plain function (bound-method self or two NULLs)", offset)
            }
        }
        func makeCall(_ f: PythonExpression, _ fSize: Int, args: [PythonExpression], argSize: Int, kwNames names: [String],
                      _ offset: Int) throws(PythonExpressionFailure) {
            guard names.count <= args.count else { throw fail("more keyword names than arguments", offset) }
            let positional = Array(args.prefix(args.count - names.count))
            let keywords = zip(names, args.suffix(names.count)).map { PythonKeywordArgument($0, $1) }
            try push(.call(f, positional, keywords), size: fSize + argSize + 1, offset)
        }
        func stringTuple(_ c: PythonConstant, _ offset: Int) throws(PythonExpressionFailure) -> [String] {
            guard case let .tuple(items) = c else { throw fail("keyword names are not a tuple of strings", offset) }
            var out: [String] = []
            for item in items {
                guard case let .string(s) = item else { throw fail("keyword names are not a tuple of strings", offset) }
                out.append(s)
            }
            return out
        }

        for (op, arg, offset) in try instructions(code.code, table: table) {
            guard let inst = table.ops[op] else {
                throw fail("opcode \(op) is not part of a pure expression (control flow, a store other than a local, a comprehension, or an instruction this reader does not know)", offset)
            }
            switch inst {
            case .noEffect, .extendedArg:
                continue
            case .loadFast:
                let v = try local(arg, offset)
                try push(v.expr, size: v.size, offset)
            case .loadFastLoadFast:
                for i in [arg >> 4, arg & 15] {
                    let v = try local(i, offset)
                    try push(v.expr, size: v.size, offset)
                }
            case .storeFast:
                guard arg >= 0, arg < code.varnames.count else { throw fail("local index \(arg) out of range", offset) }
                guard locals.count < 256 else { throw fail("too many local assignments", offset) }
                locals[arg] = try pop(offset)
            case .loadConst:
                try push(.constant(try constant(arg, offset)), size: 1, offset)
            case .loadGlobal, .loadName:
                let index = table.globalHasNullBit && inst == .loadGlobal ? arg >> 1 : arg
                if table.globalHasNullBit && inst == .loadGlobal && arg & 1 != 0 { try push(nil, size: 0, offset) }
                try push(.global(try name(index, offset)), size: 1, offset)
            case .loadAttr:
                let index = table.attrHasMethodBit ? arg >> 1 : arg
                let (base, size) = try popValue(offset)
                try push(.attribute(base, try name(index, offset)), size: size + 1, offset)
                if table.attrHasMethodBit && arg & 1 != 0 { try push(nil, size: 0, offset) }
            case .loadMethod:
                let (base, size) = try popValue(offset)
                try push(.attribute(base, try name(arg, offset)), size: size + 1, offset)
                try push(nil, size: 0, offset)
            case .loadDeref:
                guard arg >= 0, arg < derefNames.count else { throw fail("closure index \(arg) out of range", offset) }
                let n = derefNames[arg]
                if code.freevars.contains(n) {
                    try push(.closure(n), size: 1, offset)
                } else {
                    throw fail("cell variable '\(n)' (a variable captured by a nested function) is not a pure expression", offset)
                }
            case let .binary(o):
                let (b, sb) = try popValue(offset), (a, sa) = try popValue(offset)
                try push(.binary(o, a, b), size: sa + sb + 1, offset)
            case .binaryOp:
                let k = arg >= 13 ? arg - 13 : arg
                guard k < PythonOpcodeTable.binaryOpArguments.count, let o = PythonOpcodeTable.binaryOpArguments[k] else {
                    throw fail("BINARY_OP \(arg) is not an arithmetic operator", offset)
                }
                let (b, sb) = try popValue(offset), (a, sa) = try popValue(offset)
                try push(.binary(o, a, b), size: sa + sb + 1, offset)
            case let .unary(o):
                let (a, s) = try popValue(offset)
                // Constants are folded by CPython except in some versions' -(constant) forms.
                if o == .negative, case let .constant(c) = a {
                    switch c {
                    case let .int(i) where i != .min: try push(.constant(.int(-i)), size: 1, offset); continue
                    case let .float(d): try push(.constant(.float(-d)), size: 1, offset); continue
                    default: break
                    }
                }
                try push(.unary(o, a), size: s + 1, offset)
            case .callIntrinsic1:
                guard arg == 5 else { throw fail("CALL_INTRINSIC_1 \(arg) is not unary +", offset) }
                let (a, s) = try popValue(offset)
                try push(.unary(.positive, a), size: s + 1, offset)
            case .binarySubscr:
                let (index, si) = try popValue(offset), (base, sb) = try popValue(offset)
                try push(.index(base, index), size: si + sb + 1, offset)
            case .binarySlice:
                let (stop, s2) = try popValue(offset), (start, s1) = try popValue(offset), (base, sb) = try popValue(offset)
                try push(.index(base, .slice(start, stop, nil)), size: sb + s1 + s2 + 2, offset)
            case .slice0, .slice1, .slice2, .slice3:
                var start: PythonExpression? = nil, stop: PythonExpression? = nil, size = 2
                if inst == .slice2 || inst == .slice3 { let (v, s) = try popValue(offset); stop = v; size += s }
                if inst == .slice1 || inst == .slice3 { let (v, s) = try popValue(offset); start = v; size += s }
                let (base, sb) = try popValue(offset)
                try push(.index(base, .slice(start, stop, nil)), size: sb + size, offset)
            case .buildSlice:
                guard arg == 2 || arg == 3 else { throw fail("BUILD_SLICE with \(arg) items", offset) }
                let (items, size) = try popValues(arg, offset)
                try push(.slice(items[0], items[1], arg == 3 ? items[2] : nil), size: size + 1, offset)
            case .buildTuple:
                let (items, size) = try popValues(arg, offset)
                try push(.tuple(items), size: size + 1, offset)
            case .buildList:
                let (items, size) = try popValues(arg, offset)
                try push(.list(items), size: size + 1, offset)
            case .listExtend:
                guard arg == 1 else { throw fail("LIST_EXTEND \(arg)", offset) }
                let (ext, se) = try popValue(offset), (base, sb) = try popValue(offset)
                guard case let .list(items) = base else { throw fail("LIST_EXTEND of a non-list", offset) }
                let more: [PythonExpression]
                switch ext {
                case let .constant(.tuple(cs)), let .constant(.list(cs)): more = cs.map { .constant($0) }
                case let .tuple(es), let .list(es): more = es
                default: throw fail("LIST_EXTEND with a value that is not a literal sequence (a * unpacking)", offset)
                }
                try push(.list(items + more), size: sb + se + more.count, offset)
            case .listToTuple:
                let (v, s) = try popValue(offset)
                guard case let .list(items) = v else { throw fail("LIST_TO_TUPLE of a non-list", offset) }
                try push(.tuple(items), size: s, offset)
            case .kwNames:
                kwNames = try stringTuple(try constant(arg, offset), offset)
            case .callFunctionOld:
                let positional = arg & 0xFF, keywords = (arg >> 8) & 0xFF
                guard arg >> 16 == 0 else { throw fail("CALL_FUNCTION argument \(arg)", offset) }
                var kw: [PythonKeywordArgument] = []
                var size = 0
                for _ in 0..<keywords {
                    let (v, sv) = try popValue(offset), (k, _) = try popValue(offset)
                    guard case let .constant(.string(n)) = k else { throw fail("keyword name is not a string", offset) }
                    kw.insert(PythonKeywordArgument(n, v), at: 0)
                    size += sv + 1
                }
                let (args, sa) = try popValues(positional, offset)
                let (f, sf) = try popValue(offset)
                try push(.call(f, args, kw), size: sf + sa + size + 1, offset)
            case .callFunction:
                let (args, sa) = try popValues(arg, offset)
                let (f, sf) = try popValue(offset)
                try makeCall(f, sf, args: args, argSize: sa, kwNames: [], offset)
            case .callFunctionKW:
                let (namesExpr, _) = try popValue(offset)
                guard case let .constant(c) = namesExpr else { throw fail("keyword names are not a constant", offset) }
                let names = try stringTuple(c, offset)
                let (args, sa) = try popValues(arg, offset)
                let (f, sf) = try popValue(offset)
                try makeCall(f, sf, args: args, argSize: sa, kwNames: names, offset)
            case .callMethod:
                let (args, sa) = try popValues(arg, offset)
                let (f, sf) = try popCallable(withNull: true, offset)
                try makeCall(f, sf, args: args, argSize: sa, kwNames: [], offset)
            case .call:
                let (args, sa) = try popValues(arg, offset)
                let (f, sf) = try popCallable(withNull: true, offset)
                try makeCall(f, sf, args: args, argSize: sa, kwNames: kwNames ?? [], offset)
                kwNames = nil
            case .callKW:
                let (namesExpr, _) = try popValue(offset)
                guard case let .constant(c) = namesExpr else { throw fail("keyword names are not a constant", offset) }
                let names = try stringTuple(c, offset)
                let (args, sa) = try popValues(arg, offset)
                let (f, sf) = try popCallable(withNull: true, offset)
                try makeCall(f, sf, args: args, argSize: sa, kwNames: names, offset)
            case .pushNull:
                try push(nil, size: 0, offset)
            case .returnValue:
                let (v, _) = try popValue(offset)
                guard stack.isEmpty else { throw fail("values left on the stack at the return", offset) }
                return v
            case .returnConst:
                guard stack.isEmpty else { throw fail("values left on the stack at the return", offset) }
                return .constant(try constant(arg, offset))
            }
        }
        throw PythonExpressionFailure("the code ends without a return")
    }
}
