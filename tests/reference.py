"""A slow, obviously correct reference of docs/memory-model.md, for the tests only.

Independent of viz.lanes, viz.layout and viz.engine: it walks every thread of every
block one by one with plain Python integers, computes layouts from the contract's table
directly, and counts with sets. Only the parsed scenario (viz.scenario) is shared.
"""

from __future__ import annotations

from collections import defaultdict

from viz.expr import Binary, Call, Cond, Name, Num, Unary
from viz.scenario import Scenario

METRICS = (
    "smsp__inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
)


class RefFault(Exception):
    pass


def c_div(a: int, b: int) -> int:
    if b == 0:
        raise RefFault("division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def c_mod(a: int, b: int) -> int:
    return a - c_div(a, b) * b


def wrap64(x: int) -> int:
    x &= (1 << 64) - 1
    return x - (1 << 64) if x >= 1 << 63 else x


def rev(x: int, bits: int) -> int:
    out = 0
    for k in range(bits):
        out |= ((x >> k) & 1) << (bits - 1 - k)
    return out


def ev(node, env: dict) -> int:
    if isinstance(node, Num):
        return node.value
    if isinstance(node, Name):
        return env[node.name]
    if isinstance(node, Unary):
        v = ev(node.operand, env)
        return {"-": lambda: wrap64(-v), "~": lambda: ~v, "!": lambda: int(v == 0)}[node.op]()
    if isinstance(node, Cond):
        return ev(node.then, env) if ev(node.test, env) != 0 else ev(node.other, env)
    if isinstance(node, Call):
        a = [ev(x, env) for x in node.args]
        if node.func == "min":
            return min(a)
        if node.func == "max":
            return max(a)
        if not 0 <= a[1] <= 62:
            raise RefFault("rev bits")
        return rev(a[0], a[1])
    assert isinstance(node, Binary)
    op = node.op
    if op == "&&":
        return int(ev(node.left, env) != 0 and ev(node.right, env) != 0)
    if op == "||":
        return int(ev(node.left, env) != 0 or ev(node.right, env) != 0)
    a, b = ev(node.left, env), ev(node.right, env)
    if op in ("<<", ">>") and not 0 <= b <= 63:
        raise RefFault("shift")
    return {
        "+": lambda: wrap64(a + b), "-": lambda: wrap64(a - b), "*": lambda: wrap64(a * b),
        "/": lambda: c_div(a, b), "%": lambda: c_mod(a, b),
        "<<": lambda: wrap64(a << b), ">>": lambda: a >> b,
        "&": lambda: a & b, "|": lambda: a | b, "^": lambda: a ^ b,
        "<": lambda: int(a < b), "<=": lambda: int(a <= b), ">": lambda: int(a > b),
        ">=": lambda: int(a >= b), "==": lambda: int(a == b), "!=": lambda: int(a != b),
    }[op]()


def phys_offset(arr, idx: list[int], params: dict) -> int:
    """The contract's layout table, written out directly."""
    spec = arr.swizzle.text
    if len(arr.shape) == 1:
        o = idx[0]
    else:
        row, col = idx
        cols = arr.shape[1]
        bits = cols.bit_length() - 1
        if spec == "none" or spec.startswith("cute:"):
            pc = col
        elif spec == "xor":
            pc = col ^ (row % cols)
        elif spec.startswith("xor:"):
            pc = col ^ int(spec[4:], 0)
        elif spec == "diagonal":
            pc = (col + row) % cols
        elif spec == "bitrev":
            pc = rev(col, bits)
        elif spec == "bitrev-xor":
            pc = col ^ rev(row % cols, bits)
        elif spec.startswith("expr:"):
            from viz.expr import parse
            pc = ev(parse(spec[5:]), {**params, "row": row, "col": col})
        else:
            raise AssertionError(spec)
        o = row * (cols + arr.pad) + pc
    if spec.startswith("cute:"):
        b, m, s = (int(x) for x in spec[5:].split(","))
        o = o ^ ((o >> s) & (((1 << b) - 1) << m))
    return o


def ref_phases(size: int, op: str, addr_of_lane: dict[int, int]) -> list[tuple[int, int]]:
    """(first lane, lanes) of each phase. Stores: 32 / 16 / 8 lanes by size. Loads of 8 and
    16 bytes (measured on H100): twice as many lanes per phase when in every lane quad
    lanes (0,1) and (2,3) agree, or (0,2) and (1,3) (inactive lanes agree with anything)."""
    def agree(a, b):
        return a not in addr_of_lane or b not in addr_of_lane or addr_of_lane[a] == addr_of_lane[b]

    per = 32 if size <= 4 else (16 if size == 8 else 8)
    if size > 4 and op == "load" and all(
            (agree(q, q + 1) and agree(q + 2, q + 3)) or (agree(q, q + 2) and agree(q + 1, q + 3))
            for q in range(0, 32, 4)):
        per *= 2
    return [(p, per) for p in range(0, 32, per)]


def reference(sc: Scenario, extras: dict | None = None) -> tuple[dict[str, int], list[list[int]]]:
    """Whole-launch metrics and, per instruction, wavefronts/sectors of every warp (flat).

    With ``extras`` (a dict), it is filled per instruction number with the shared figures
    the reasons name: ``paired`` (issued loads whose phases the pair rule halved),
    ``deepest`` (the most wavefronts of one phase) and ``idle`` (phases of issued
    instructions with no active lane), and for global ones ``used`` (distinct bytes asked for)."""
    gx, gy, gz = sc.launch.grid
    bx_, by_, bz_ = sc.launch.block
    nt = bx_ * by_ * bz_
    metrics = dict.fromkeys(METRICS, 0)
    per_warp: list[list[int]] = []
    for ins in sc.instructions():
        acc = sc.accesses[ins.access]
        arr = sc.array(acc.array)
        op = "ld" if acc.op == "load" else "st"
        size = ins.size
        values = []
        extra = {"paired": 0, "deepest": 0, "idle": 0, "used": 0}
        if extras is not None:
            extras[ins.number] = extra
        for blk in range(gx * gy * gz):
            for w in range(-(-nt // 32)):
                lanes = []
                for ln in range(32):
                    t = w * 32 + ln
                    if t >= nt:
                        continue
                    env = dict(sc.params)
                    env.update(dict(ins.loop))
                    env.update({
                        "threadIdx.x": t % bx_, "threadIdx.y": (t // bx_) % by_, "threadIdx.z": t // (bx_ * by_),
                        "blockIdx.x": blk % gx, "blockIdx.y": (blk // gx) % gy, "blockIdx.z": blk // (gx * gy),
                        "blockDim.x": bx_, "blockDim.y": by_, "blockDim.z": bz_,
                        "gridDim.x": gx, "gridDim.y": gy, "gridDim.z": gz,
                        "tid": t, "lane": t % 32, "warp": t // 32})
                    if acc.when is not None and ev(acc.when, env) == 0:
                        continue
                    idx = [ev(n, env) for n in acc.indices]
                    for i, ext in zip(idx, arr.shape):
                        if not 0 <= i < ext:
                            raise RefFault("bounds")
                    addr = arr.base + phys_offset(arr, idx, sc.params) * arr.type.size + ins.byte_offset
                    if addr % size:
                        raise RefFault("misaligned")
                    lanes.append((ln, addr))
                if not lanes:
                    values.append(0)
                    continue
                if arr.space == "shared":
                    total = phases = 0
                    plan = ref_phases(size, acc.op, dict(lanes))
                    extra["paired"] += len(plan) < len(ref_phases(size, "store", {}))
                    for first, per in plan:
                        p = first
                        banks = defaultdict(set)
                        for ln, addr in lanes:
                            if p <= ln < p + per:
                                for q in range(max(1, size // 4)):
                                    word = addr // 4 + q
                                    banks[word % 32].add(word)
                        if banks:
                            phases += 1
                            total += max(len(s) for s in banks.values())
                            extra["deepest"] = max(extra["deepest"], max(len(s) for s in banks.values()))
                        else:
                            extra["idle"] += 1
                    metrics[f"smsp__inst_executed_op_shared_{op}.sum"] += 1
                    metrics[f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"] += total
                    metrics[f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum"] += total - phases
                    values.append(total)
                else:
                    sectors = {b // 32 for _, a in lanes for b in range(a, a + size)}
                    extra["used"] += len({b for _, a in lanes for b in range(a, a + size)})
                    metrics[f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum"] += 1
                    metrics[f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum"] += len(sectors)
                    values.append(len(sectors))
        per_warp.append(values)
    return metrics, per_warp
