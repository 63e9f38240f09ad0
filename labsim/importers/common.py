"""What the two importers share: their error, the dtypes labsim knows, and a refusal that helps."""
from __future__ import annotations

from ..support.errors import LabsimError

#: dtype names labsim's arrays take (labsim.core.dtypes); a program in another dtype is refused.
DTYPES = ("float32", "float64", "float16", "bfloat16", "int32", "int8", "bool")


class ImportUnsupportedError(LabsimError, NotImplementedError):
    """A program uses something an importer has no rule for (an op, a dtype, control flow, a dynamic shape)."""


class MissingPackageError(LabsimError, ImportError):
    """The peer package an importer reads (JAX, PyTorch) is not installed."""


def need(package: str, fn: str):
    """Import ``package`` for ``fn``, or say how to install it."""
    import importlib
    try:
        return importlib.import_module(package)
    except ImportError:
        raise MissingPackageError(
            f"{fn} needs the '{package}' package, which is not installed; labsim itself needs only NumPy. "
            f"Install it (pip install {'jax' if package == 'jax' else 'torch'}), or run `make crosscheck`, "
            f"which installs JAX and PyTorch into .venv") from None


def dtype_name(dtype, fn: str, where: str) -> str:
    """labsim's name for a JAX/NumPy/PyTorch dtype (``torch.float32`` -> ``float32``), or a refusal."""
    name = str(dtype).removeprefix("torch.")
    name = {"float": "float32", "double": "float64", "half": "float16", "int": "int32"}.get(name, name)
    if name not in DTYPES:
        raise ImportUnsupportedError(f"{fn}: {where} has dtype {name}, which labsim does not model; "
                                     f"labsim's dtypes are {', '.join(DTYPES)} (cast it first)")
    return name


def unsupported(fn: str, kind: str, name: str, where: str, supported, hint: str = "") -> ImportUnsupportedError:
    names = ", ".join(sorted(supported))
    return ImportUnsupportedError(f"{fn}: the {kind} '{name}' ({where}) has no labsim rule. "
                                  f"{hint + ' ' if hint else ''}Supported: {names}")
