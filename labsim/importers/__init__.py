"""The importers floor: the reader's own JAX or PyTorch program as a labsim Graph.

``from_jax(f, *example_args)`` reads a jaxpr, ``from_torch(module_or_fn, *example_inputs)`` a
``torch.export`` graph in the core ATen opset. Each is a table keyed by primitive or ATen op whose rows
call ``labsim.numpy`` inside :func:`labsim.trace`, so the result is a graph of labsim's own ops. JAX and
PyTorch are imported only inside these functions.
"""
from .common import ImportUnsupportedError, MissingPackageError
from .jax_import import from_jax
from .torch_import import from_torch, torch_arguments

__all__ = ["from_jax", "from_torch", "torch_arguments", "ImportUnsupportedError", "MissingPackageError"]
