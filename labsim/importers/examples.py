"""One GPT-2-style block written three ways: PyTorch, JAX and ``labsim.numpy``.

The appendix "Bring your own model" prints the PyTorch and JAX versions (their source, read from here)
and runs the ``labsim.numpy`` one; ``make crosscheck`` imports the first two with ``ls.from_torch`` and
``ls.from_jax`` and checks that all three compute the same values, so the page's program is the
reader's. The parameters are a dict named as PyTorch's ``state_dict`` names them; a weight is stored as
PyTorch stores it, (out features, in features).
"""
from __future__ import annotations

import numpy as np

D_MODEL, HEADS, SEQ, BATCH = 64, 4, 16, 2


def param_shapes(d: int = D_MODEL) -> dict[str, tuple[int, ...]]:
    return {"ln1.weight": (d,), "ln1.bias": (d,), "qkv.weight": (3 * d, d), "qkv.bias": (3 * d,),
            "proj.weight": (d, d), "proj.bias": (d,), "ln2.weight": (d,), "ln2.bias": (d,),
            "fc.weight": (4 * d, d), "fc.bias": (4 * d,), "out.weight": (d, 4 * d), "out.bias": (d,)}


def random_params(d: int = D_MODEL, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {k: (rng.standard_normal(s) / np.sqrt(s[-1])).astype(np.float32) if len(s) == 2 else
            (1.0 + 0.1 * rng.standard_normal(s)).astype(np.float32) if k.startswith("ln") else
            (0.1 * rng.standard_normal(s)).astype(np.float32) for k, s in param_shapes(d).items()}


def gpt2_block_torch(params: dict | None = None, d: int = D_MODEL, heads: int = HEADS):
    import torch
    import torch.nn.functional as F
    from torch import nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q, k, v = (z.view(b, t, heads, d // heads).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    block = Block().eval()
    if params is not None:
        block.load_state_dict({k: torch.from_numpy(v) for k, v in params.items()})
    return block


def gpt2_block_jax(params, x, heads: int = HEADS):
    import jax
    import jax.numpy as jnp

    def linear(h, name):
        return h @ params[name + ".weight"].T + params[name + ".bias"]

    def norm(h, name):
        mu = h.mean(-1, keepdims=True)
        var = ((h - mu) ** 2).mean(-1, keepdims=True)
        return (h - mu) / jnp.sqrt(var + 1e-5) * params[name + ".weight"] + params[name + ".bias"]

    b, t, d = x.shape
    q, k, v = jnp.split(linear(norm(x, "ln1"), "qkv"), 3, axis=-1)
    q, k, v = (z.reshape(b, t, heads, d // heads).transpose(0, 2, 1, 3) for z in (q, k, v))
    s = q @ k.transpose(0, 1, 3, 2) / jnp.sqrt(d // heads)
    s = jnp.where(jnp.tril(jnp.ones((t, t), bool)), s, -jnp.inf)
    y = (jax.nn.softmax(s, axis=-1) @ v).transpose(0, 2, 1, 3).reshape(b, t, d)
    x = x + linear(y, "proj")
    return x + linear(jax.nn.gelu(linear(norm(x, "ln2"), "fc"), approximate=False), "out")


def gpt2_block_lnp(params, x, heads: int = HEADS):
    """The same block in ``labsim.numpy`` (the causal mask built from ``arange`` and a comparison)."""
    from ..frontend import nn as lnn
    from ..frontend import numpy as lnp

    def linear(h, name):
        return h @ lnp.transpose(params[name + ".weight"]) + params[name + ".bias"]

    def norm(h, name):
        return lnn.layer_norm(h, params[name + ".weight"], params[name + ".bias"], eps=1e-5)

    b, t, d = x.shape
    qkv = linear(norm(x, "ln1"), "qkv")
    q, k, v = (lnp.transpose(lnp.reshape(qkv[:, :, i * d:(i + 1) * d], (b, t, heads, d // heads)), (0, 2, 1, 3))
               for i in range(3))
    s = q @ lnp.transpose(k, (0, 1, 3, 2)) * (1.0 / float(np.sqrt(d // heads)))
    causal = lnp.reshape(lnp.arange(t), (t, 1)) >= lnp.reshape(lnp.arange(t), (1, t))
    y = lnn.softmax(lnp.where(causal, s, -np.inf), axis=-1) @ v
    x = x + linear(lnp.reshape(lnp.transpose(y, (0, 2, 1, 3)), (b, t, d)), "proj")
    return x + linear(lnn.gelu(linear(norm(x, "ln2"), "fc"), approximate=False), "out")
