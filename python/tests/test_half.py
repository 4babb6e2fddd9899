"""headmap's float16 rounding equals NumPy's astype bit for bit, subnormal halves included."""

import numpy as np

from headmap._half import CHUNK, to_half


def same_bits(values, label):
    want = values.astype(np.float16).view(np.uint16)
    got = to_half(values).view(np.uint16)
    bad = np.flatnonzero(want != got)
    assert bad.size == 0, f"{label}: {bad.size} differ, first {values.flat[bad[0]]!r}: {got.flat[bad[0]]:#06x} != {want.flat[bad[0]]:#06x}"


def test_every_float32_from_zero_to_the_largest_half_in_steps_of_a_prime():
    bits = np.arange(0, 0x477FE000, 97, dtype=np.uint32)  # 0 … 65504, across every exponent
    same_bits(bits.view(np.float32), "strided bit patterns")


def test_ties_and_edges_round_to_nearest_even():
    edges = [0, 2**-25, 2**-25 * 1.0000001, 3 * 2**-25, 2**-24, 2**-14 * (1 - 2**-11), 2**-14, 6.1e-5,
             0.5, 1 - 2**-12, 1, 1 + 2**-11, 1 + 3 * 2**-11, 1.0009765625, 65504]
    same_bits(np.array(edges, dtype=np.float32), "edges")


def test_softmax_weights_of_every_size_across_chunks():
    rng = np.random.default_rng(5)
    scores = rng.standard_normal((3, CHUNK // 512 + 1, 2, 256)) * 6  # more than one chunk
    w = np.exp(scores - scores.max(-1, keepdims=True))
    w = (w / w.sum(-1, keepdims=True)).astype(np.float32)
    same_bits(w, "softmax")
    assert to_half(w).shape == w.shape and to_half(w).dtype == np.dtype("<f2")
