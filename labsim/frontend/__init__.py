"""The front end: what a reader writes. ``numpy`` (``lnp``, mirrors ``jax.numpy``), ``nn`` (mirrors
``jax.nn``), ``autodiff`` (``grad``, ``value_and_grad``, ``vjp``). Reads the core only."""
