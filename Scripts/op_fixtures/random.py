"""NumPy reference of `Op.random`: mlconv's documented generator (MLGraph RandomAttributes), written
from its formula. Element i uses u(2i) (and u(2i+1) for normals), with

    u(k) = (floor(splitmix64(seed + (k + 1) * 0x9E3779B97F4A7C15) / 2**40) + 0.5) / 2**24

in uint64 wrapping arithmetic; normal = mean + std * sqrt(-2 ln u1) cos(2 pi u2) in float64,
uniform = low + (high - low) * u, Bernoulli = u < p. Core ML does not specify its generator; this
fixture pins mlconv's, so a change of the generator is a visible, deliberate change."""
import numpy as np

GAMMA = np.uint64(0x9E3779B97F4A7C15)
M1 = np.uint64(0xBF58476D1CE4E5B9)
M2 = np.uint64(0x94D049BB133111EB)


def uniform(seed, k):
    with np.errstate(over="ignore"):
        z = np.uint64(seed & 0xFFFFFFFFFFFFFFFF) + (k.astype(np.uint64) + np.uint64(1)) * GAMMA
        z = (z ^ (z >> np.uint64(30))) * M1
        z = (z ^ (z >> np.uint64(27))) * M2
        z = z ^ (z >> np.uint64(31))
    return ((z >> np.uint64(40)).astype(np.float64) + 0.5) / 16777216.0


def sample(dist, seed, n):
    i = np.arange(n, dtype=np.uint64)
    u1 = uniform(seed, np.uint64(2) * i)
    if dist["kind"] == "normal":
        u2 = uniform(seed, np.uint64(2) * i + np.uint64(1))
        z = np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
        return (np.float64(np.float32(dist["mean"])) + np.float64(np.float32(dist["stdDev"])) * z).astype(np.float32)
    if dist["kind"] == "uniform":
        lo, hi = np.float64(np.float32(dist["low"])), np.float64(np.float32(dist["high"]))
        return (lo + (hi - lo) * u1).astype(np.float32)
    return (u1 < np.float64(np.float32(dist["probability"]))).astype(np.float32)


def attrs(dist, seed):
    a = {"distribution": dist["kind"], "seed": seed}
    a.update({k: v for k, v in dist.items() if k != "kind"})
    return a


def cases():
    for name, dist, seed, shape in [
        ("random_normal", {"kind": "normal", "mean": 0.5, "stdDev": 2.0}, 7, (2, 3, 4)),
        ("random_uniform", {"kind": "uniform", "low": -1.0, "high": 3.0}, -1, (5, 4)),
        ("random_bernoulli", {"kind": "bernoulli", "probability": 0.3}, 123456789012345, (64,)),
    ]:
        x = np.zeros(shape, dtype=np.float32)  # only the shape is read
        y = sample(dist, seed, int(np.prod(shape))).reshape(shape)
        yield dict(name=name, op="random", attributes=attrs(dist, seed), inputs=[x], outputs=[y], tolerance=1e-6)
