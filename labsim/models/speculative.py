"""Speculative sampling: the accept / resample rule that keeps the target model's distribution exact.

Introduced in "LLM inference". Leviathan et al. 2023 (Algorithm 1) and Chen et al. 2023: a draft model
proposes token x from its distribution q; the target keeps it with probability min(1, p(x) / q(x)); at
the first rejection the target's token is drawn from the *residual* distribution
norm(max(0, p − q)), and the round stops. If every draft token is kept, one more token is drawn from
the target's next distribution. The emitted token is then distributed exactly as p:

    P(emit x) = q(x) · min(1, p(x)/q(x)) + (1 − β) · max(0, p(x) − q(x)) / (1 − β) = min(p, q)(x) + max(0, p − q)(x) = p(x),

with β = Σ min(p, q) the acceptance probability. Drawing the replacement from p instead biases the
output towards tokens the draft already favours. Exposed as ``ls.serving.speculative_sample`` and
friends.
"""
from __future__ import annotations

import numpy as np

from ..support.choice import Choice
from ..support.errors import ArgumentError, ArgumentTypeError, count


class OnReject(Choice):
    """What the target samples from when it rejects a draft token (a member or its string)."""

    RESIDUAL = "residual"  # max(0, p - q), normalised: the exact rule of speculative sampling
    TARGET = "target"      # p itself: the naive rule, which biases the output


ON_REJECT = tuple(m.value for m in OnReject)


def _dist(a, name: str, where: str, ndim: int) -> np.ndarray:
    try:
        a = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"{where}: {name} must be an array of probabilities, got {type(a).__name__}") from None
    if a.ndim != ndim or a.shape[-1] < 1:
        raise ArgumentError(f"{where}: {name} must be a {ndim}-D array of probabilities over the vocabulary, "
                         f"got shape {a.shape}")
    if not np.all(np.isfinite(a)) or (a < 0).any() or not np.allclose(a.sum(axis=-1), 1.0, atol=1e-9):
        raise ArgumentError(f"{where}: {name} must hold probabilities (>= 0, each row summing to 1)")
    return a


def _check_mode(on_reject, where: str) -> OnReject:
    return OnReject.of(on_reject, "on_reject", ArgumentError, where=where)


def residual(p, q) -> np.ndarray:
    """The distribution the target samples from at a rejection: max(0, p − q) / Σ max(0, p − q).
    If p equals q nothing is ever rejected; the residual is then p itself."""
    p = _dist(p, "p", "residual", 1)
    q = _dist(q, "q", "residual", 1)
    if p.shape != q.shape:
        raise ArgumentError(f"residual: p and q must have the same vocabulary, got {p.shape} and {q.shape}")
    r = np.maximum(p - q, 0.0)
    s = r.sum()
    return r / s if s > 1e-15 else p.copy()


def speculative_sample(p, q, *, rng=None, seed: int = 0, on_reject: OnReject | str = OnReject.RESIDUAL) -> list[int]:
    """One round of speculative sampling over a vocabulary of V tokens.

    ``q`` (k, V): the draft's distribution at each of k positions; ``p`` (k + 1, V): the target's at the
    same positions and one more (given the drafted prefix, as the target computes them in its one verify
    step). Draws each draft token from q, keeps it with probability min(1, p/q); at the first rejection
    appends a token drawn from :func:`residual` (``on_reject="target"``: from p, the biased variant, for
    comparison) and stops; if all k are kept, appends one drawn from p[k]. Returns the emitted tokens
    (1 to k + 1 of them).
    """
    p = _dist(p, "p", "speculative_sample", 2)
    q = _dist(q, "q", "speculative_sample", 2)
    on_reject = _check_mode(on_reject, "speculative_sample")
    if p.shape[0] != q.shape[0] + 1 or p.shape[1] != q.shape[1]:
        raise ArgumentError(f"speculative_sample: p must be (k + 1, V) for q (k, V); got p {p.shape}, q {q.shape}")
    if rng is None:
        rng = np.random.default_rng(count("speculative_sample", "seed", seed, minimum=0))
    elif not isinstance(rng, np.random.Generator):
        raise ArgumentTypeError(f"speculative_sample: rng must be a numpy.random.Generator, got {type(rng).__name__}")
    out = []
    V = p.shape[1]
    for i in range(q.shape[0]):
        x = int(rng.choice(V, p=q[i]))
        if rng.random() < min(1.0, p[i, x] / q[i, x]):
            out.append(x)
            continue
        fix = residual(p[i], q[i]) if on_reject is OnReject.RESIDUAL else p[i]
        out.append(int(rng.choice(V, p=fix)))
        return out
    out.append(int(rng.choice(V, p=p[-1])))
    return out


def first_token_distribution(p, q, on_reject: OnReject | str = OnReject.RESIDUAL) -> np.ndarray:
    """The exact distribution of the first emitted token for one position (closed form): min(p, q) +
    (1 − β) · r, with β = Σ min(p, q) and r the residual (or p itself for ``on_reject="target"``)."""
    p = _dist(p, "p", "first_token_distribution", 1)
    q = _dist(q, "q", "first_token_distribution", 1)
    on_reject = _check_mode(on_reject, "first_token_distribution")
    if p.shape != q.shape:
        raise ArgumentError(f"first_token_distribution: p and q must have the same vocabulary, got {p.shape} and {q.shape}")
    kept = np.minimum(p, q)
    fix = residual(p, q) if on_reject is OnReject.RESIDUAL else p
    return kept + (1.0 - kept.sum()) * fix


def simulate_first_token(p, q, trials: int, *, seed: int = 0, on_reject: OnReject | str = OnReject.RESIDUAL) -> np.ndarray:
    """Monte-Carlo frequencies of the first emitted token over ``trials`` rounds (vectorised form of
    :func:`speculative_sample` for one position): draw x from q, keep it with probability
    min(1, p(x)/q(x)), else draw from the residual (or from p)."""
    p = _dist(p, "p", "simulate_first_token", 1)
    q = _dist(q, "q", "simulate_first_token", 1)
    on_reject = _check_mode(on_reject, "simulate_first_token")
    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or trials < 1:
        raise ArgumentError(f"simulate_first_token: trials must be a whole number >= 1, got {trials!r}")
    if p.shape != q.shape:
        raise ArgumentError(f"simulate_first_token: p and q must have the same vocabulary, got {p.shape} and {q.shape}")
    rng = np.random.default_rng(count("simulate_first_token", "seed", seed, minimum=0))
    V = p.size
    x = rng.choice(V, size=trials, p=q)
    with np.errstate(divide="ignore", invalid="ignore"):
        keep = rng.random(trials) < np.minimum(1.0, p[x] / q[x])
    fix = residual(p, q) if on_reject is OnReject.RESIDUAL else p
    x = np.where(keep, x, rng.choice(V, size=trials, p=fix))
    return np.bincount(x, minlength=V) / trials


def total_variation(a, b) -> float:
    """Total-variation distance ½ Σ |a − b| between two distributions."""
    arrs = []
    for name, x in (("a", a), ("b", b)):
        try:
            arrs.append(np.asarray(x, dtype=np.float64))
        except (TypeError, ValueError):
            raise ArgumentTypeError(f"total_variation: {name} must be an array of probabilities, got "
                                    f"{type(x).__name__}") from None
        if not np.all(np.isfinite(arrs[-1])):
            raise ArgumentError(f"total_variation: {name} must hold finite numbers")
    a, b = arrs
    if a.shape != b.shape:
        raise ArgumentError(f"total_variation: a and b must have the same shape, got {a.shape} and {b.shape}")
    return 0.5 * float(np.abs(a - b).sum())


__all__ = ["residual", "speculative_sample", "first_token_distribution", "simulate_first_token",
           "total_variation", "OnReject", "ON_REJECT"]
