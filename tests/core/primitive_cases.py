"""Each primitive's lowering on tiny graphs: name -> (output shape, steps, sizes), chains over an
input [C, H, W] (tests.support.chain). test_codegen_tvm compiles each with TVM against the
torch module; tests/test_primitive_tables.py checks every primitive of the registry has one."""

TINY = {"C": 6, "H": 5, "W": 4}

#: name -> (output shape, steps, bindings); each step (node, op, params, inputs)
CASES = {
    "shift": (
        ["C", "H", "W"],
        [("s", "shift", {"dim": -1, "amount": -1}, ["input"]), ("s2", "shift", {"dim": 0, "amount": 2}, ["s"])],
        TINY,
    ),
    "unfold_even_window": (["C", "K", "H", "W"], [("u", "unfold", {"dim": -1, "K": "K"}, ["input"])], {**TINY, "K": 2}),
    "unfold_same_axis_twice": (
        ["C", "K", "K", "H", "W"],
        [("u1", "unfold", {"dim": 1, "K": "K"}, ["input"]), ("u2", "unfold", {"dim": 3, "K": "K"}, ["u1"])],
        {**TINY, "K": 3},
    ),
    "fold_avg_max": (
        ["H"],
        [("f", "fold", {"dim": 0, "fn": "avg"}, ["input"]), ("g", "fold", {"dim": -1, "fn": "max"}, ["f"])],
        TINY,
    ),
    "elementwise_softmax": (
        ["H", "W"],
        [
            ("a", "elementwise", {"fn": "gelu"}, ["input"]),
            ("b", "elementwise", {"fn": "sqrt"}, ["a"]),
            ("c", "elementwise", {"fn": "tanh"}, ["b"]),
            ("d", "elementwise", {"fn": "sin"}, ["c"]),
            ("sm", "softmax", {"dim": 0}, ["d"]),
            ("sum", "reduce", {"dim": 0}, ["sm"]),
        ],
        TINY,
    ),
    "broadcast_grouped": (
        ["C", "H", "W"],
        [
            ("grp", "group", {"dim": 0, "G": "G"}, ["input"]),
            ("m", "fold", {"dim": 1, "fn": "avg"}, ["grp"]),
            ("b", "broadcast", {"fn": "sub"}, ["m", "input"]),
        ],
        {**TINY, "G": 2},
    ),
    "broadcast_unaligned": (
        ["C/s", "s", "H", "W"],
        [
            ("grp", "group", {"dim": 0, "G": "G"}, ["input"]),
            ("m", "fold", {"dim": 1, "fn": "max"}, ["grp"]),
            ("sp", "split", {"dim": 0, "B": "s"}, ["input"]),
            ("b", "broadcast", {"fn": "min"}, ["m", "sp"]),
        ],
        {"C": 12, "H": 5, "W": 4, "G": 2, "s": 4},
    ),
    "stride_expand_merge": (
        ["2*C", "H", "W/s"],
        [
            ("st", "stride", {"dim": -1, "S": "s"}, ["input"]),
            ("ex", "expand", {"dim": 0, "size": "2"}, ["st"]),
            ("mg", "merge", {"dim": 0}, ["ex"]),
        ],
        {**TINY, "s": 2},
    ),
    "fc_channels_after_spatial": (
        ["C_out", "H", "W"],
        [("ex", "expand", {"dim": 3, "size": "E"}, ["input"]), ("fc", "fc", {"out": "C_out", "groups": "G"}, ["ex"])],
        {**TINY, "E": 2, "C_out": 4, "G": 2},
    ),
    "fc_block_cuts_an_axis": (
        ["C_out", "H", "W"],
        [("u", "unfold", {"dim": 1, "K": "K"}, ["input"]), ("fc", "fc", {"out": "C_out", "groups": "G"}, ["u"])],
        {"C": 8, "H": 5, "W": 4, "K": 3, "C_out": 4, "G": 2},
    ),
    "fc_block_is_flat": (
        ["C_out", "H", "W"],
        [("u", "unfold", {"dim": 1, "K": "K"}, ["input"]), ("fc", "fc", {"out": "C_out", "groups": "G"}, ["u"])],
        {"C": 4, "H": 5, "W": 4, "K": 3, "C_out": 6, "G": 6},
    ),
    "share_partial_reduce": (
        ["C_out", "C", "W"],
        [("sh", "share", {"dims": [0], "out": "C_out"}, ["input"]), ("r", "reduce", {"dim": 2}, ["sh"])],
        {**TINY, "C_out": 3},
    ),
    "share_without_reduce_or_out": (["C", "H", "W"], [("sh", "share", {"dims": [0], "out": None}, ["input"])], TINY),
    "stride_then_unfold": (
        ["C", "H/s", "W"],
        [
            ("st", "stride", {"dim": 1, "S": "s"}, ["input"]),
            ("u", "unfold", {"dim": 1, "K": "K"}, ["st"]),
            ("r", "reduce", {"dim": 1}, ["u"]),
        ],
        {**TINY, "H": 6, "K": 3, "s": 2},
    ),
    "shift_then_unfold": (
        ["C", "H", "W"],
        [
            ("s", "shift", {"dim": 2, "amount": 1}, ["input"]),
            ("u", "unfold", {"dim": 2, "K": "K"}, ["s"]),
            ("r", "reduce", {"dim": 1}, ["u"]),
        ],
        {**TINY, "K": 3},
    ),
    "concat_channels": (
        ["2*C", "H", "W"],
        [("a", "elementwise", {"fn": "relu"}, ["input"]), ("cat", "concat", {"dim": 0}, ["input", "a"])],
        TINY,
    ),
}
