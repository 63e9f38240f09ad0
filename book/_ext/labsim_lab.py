"""JupyterLab for the labsim book: ``make lab`` (and the conda route) start it through this file.

    python book/_ext/labsim_lab.py [--root DIR] [--port N] [--no-browser] [--edition ko] [-- more jupyter lab options]

What it sets up, so that JupyterLab shows a chapter as the website does:

* The server is rooted at the repository (``jupytext.toml`` there applies: a ``.md`` chapter opens as a
  notebook, saving rewrites it exactly and pairs it to ``_notebooks/``) and opens ``chapters/``.
* Markdown files open as notebooks by default (a JupyterLab settings override in this environment).
* Its contents manager, :class:`LabContentsManager` (jupytext's, plus two translations that are undone
  on save, so the ``.md`` on disk never changes):

  - cells the website hides (tags ``remove-cell``, ``remove-input``, ``hide-input``, ``remove-output``,
    ``hide-output``) open collapsed: the cell metadata ``jupyter.source_hidden`` /
    ``jupyter.outputs_hidden`` that JupyterLab honours;
  - computed values: ``{glue:text}`name:fmt``` (a myst-nb role that jupyterlab-myst does not know)
    opens as ``{eval}`glue.text("name", "fmt")```, an inline expression that jupyterlab-myst evaluates
    in the kernel when the markdown cell runs (``glue`` is :func:`labsim.viz.glue`, which records every
    value it glues). MyST itself (admonitions, exercises and solutions) renders through jupyterlab-myst;
  - ``{term}``, ``{cite}``, ``{ref}`` open as links with words, not keys, and a solution that spans
    cells (one with code) opens collapsed as a whole (``labsim_lab_roles.py``).

  On save it also keeps what JupyterLab would otherwise change in a file the reader did not edit: the
  kernelspec of the header stays the file's when Lab's is the same kernel (Lab writes "Python 3
  (ipykernel)"); the values jupyterlab-myst computes in markdown cells (``user_expressions``) are kept
  out of the ``.md`` by ``jupytext.toml`` and go to the paired notebook only, from which they come
  back when the chapter is opened again (the last computed values show before Run All). Opening gives
  the notebook the kernelspec, language_info (from the pair) and ``collapsed`` flags as Lab records
  them, so a chapter opened again is not marked modified when its kernel starts (a first opening,
  with no pair yet, is: the kernel's language_info is new; autosave then writes the same bytes).

Known limit: running a markdown cell shows it (JupyterLab's rule), so after Run All a solution's text
cells are open; its code stays collapsed.
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
import labsim_lab_roles as _roles  # noqa: E402

#: tags -> what JupyterLab collapses (source, outputs)
HIDDEN = {"remove-cell": (True, True), "remove-input": (True, False), "hide-input": (True, False),
          "remove-output": (False, True), "hide-output": (False, True), "hide-cell": (True, True)}
_MARK = "labsim_lab"  # cell metadata key recording what we added, so saving removes exactly that

_GLUE_TEXT = re.compile(r"\{glue:text\}`([A-Za-z_][A-Za-z0-9_]*)(?::([^`]*))?`")
_EVAL = re.compile(r'\{eval\}`glue\.text\("([A-Za-z_][A-Za-z0-9_]*)"(?:, "((?:[^"\\]|\\.)*)")?\)`')


def glue_to_eval(text: str) -> str:
    """``{glue:text}`x:,.0f``` -> ``{eval}`glue.text("x", ",.0f")```."""
    def sub(m):
        fmt = m.group(2)
        return f'{{eval}}`glue.text("{m.group(1)}"' + (f", {json.dumps(fmt)}" if fmt is not None else "") + ")`"
    return _GLUE_TEXT.sub(sub, text)


def eval_to_glue(text: str) -> str:
    """The inverse of :func:`glue_to_eval`."""
    def sub(m):
        fmt = m.group(2)
        return f"{{glue:text}}`{m.group(1)}" + (f":{json.loads(chr(34) + fmt + chr(34))}" if fmt is not None else "") + "`"
    return _EVAL.sub(sub, text)


def for_lab(nb, path: str | None = None) -> None:
    """Change a notebook read from disk into what JupyterLab should show (in place); ``path`` is the
    document's path from the server root (for the links of ``{ref}``, ``{term}``, ``{cite}``)."""
    import nbformat

    cells, solution = _roles.solution_cells(
        nb.cells, lambda src, md: nbformat.v4.new_markdown_cell(src, metadata=nbformat.from_dict(md)))
    if len(cells) != len(nb.cells):
        nb.cells = cells
    solution = {id(c) for c in solution}
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            src = _roles.roles_to_links(glue_to_eval(cell.source), path)
            if src != cell.source:
                cell.source = src
        tags = set(cell.get("metadata", {}).get("tags", []))
        source_hidden = any(HIDDEN[t][0] for t in tags & HIDDEN.keys()) or id(cell) in solution
        outputs_hidden = any(HIDDEN[t][1] for t in tags & HIDDEN.keys()) or (
            id(cell) in solution and cell.cell_type == "code")
        if source_hidden or outputs_hidden:
            jup = cell.metadata.setdefault("jupyter", {})
            added = {}
            if source_hidden and "source_hidden" not in jup:
                jup["source_hidden"] = added["source_hidden"] = True
            if outputs_hidden and "outputs_hidden" not in jup:
                jup["outputs_hidden"] = added["outputs_hidden"] = True
            if jup.get("outputs_hidden") and cell.cell_type == "code" and "collapsed" not in cell.metadata:
                cell.metadata["collapsed"] = added["collapsed"] = True  # as Lab records it: opening is no change
            if added:
                cell.metadata[_MARK] = sorted(added)
            elif not jup:
                cell.metadata.pop("jupyter")


def for_disk(nb, kernelspec: dict | None = None) -> None:
    """Undo :func:`for_lab` before a notebook is written (in place). ``kernelspec``: the one in the file
    on disk, kept when JupyterLab's is the same kernel (Lab writes its own display name,
    "Python 3 (ipykernel)", into every notebook it runs)."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            src = _roles.links_to_roles(eval_to_glue(cell.source))
            if src != cell.source:
                cell.source = src
        added = cell.get("metadata", {}).pop(_MARK, None)
        if added and "collapsed" in added:
            cell.metadata.pop("collapsed", None)
        jup = cell.get("metadata", {}).get("jupyter")
        if jup is None:
            continue
        for key in added or ():
            jup.pop(key, None)
        if not jup:
            cell.metadata.pop("jupyter")
    nb.cells = _roles.join_split_cells(nb.cells)
    lab = nb.get("metadata", {}).get("kernelspec")
    if kernelspec and isinstance(lab, dict) and lab.get("name") == kernelspec.get("name"):
        nb.metadata["kernelspec"] = dict(kernelspec)


def _last_values(manager, path: str, nb) -> None:
    """Give the markdown cells the values jupyterlab-myst last computed in them (``user_expressions``,
    which ``jupytext.toml`` keeps out of the ``.md``), from the paired notebook, so that Lab shows the
    last computed values, not their code, before Run All. A cell changed since then gets none."""
    try:
        from jupytext.paired_paths import paired_paths

        fmt, formats = manager.paired_notebooks[path.strip("/")]
        pairs = [p for p, _ in paired_paths(path.strip("/"), fmt, formats) if p.endswith(".ipynb")]
        os_path = manager._get_os_path(pairs[0]) if pairs and not path.endswith(".ipynb") else ""
        if not os.path.isfile(os_path):
            return
        with open(os_path, encoding="utf-8") as f:
            pair = json.load(f)
        cells = pair.get("cells", [])
        if "language_info" in pair.get("metadata", {}) and "language_info" not in nb.metadata:
            nb.metadata["language_info"] = pair["metadata"]["language_info"]  # as the kernel will set it
    except Exception:  # no pair, or one that cannot be read: nothing to show before Run All
        return
    last = {}
    for cell in cells:
        values = cell.get("metadata", {}).get("user_expressions")
        if cell.get("cell_type") == "markdown" and values:
            src = cell.get("source", "")
            last["".join(src) if isinstance(src, list) else src] = values
    for cell in nb.cells:
        if cell.cell_type == "markdown" and "user_expressions" not in cell.metadata and cell.source in last:
            cell.metadata["user_expressions"] = last[cell.source]


def _opened(model: dict, content: bool, path: str = "", manager=None) -> dict:
    """A model the base manager read, as JupyterLab should see it."""
    if content and model.get("type") == "notebook" and model.get("content") is not None:
        if manager is not None:
            _last_values(manager, path, model["content"])
        for_lab(model["content"], path or model.get("path"))
        _as_lab_writes_it(model["content"])
    return model


@functools.lru_cache(maxsize=None)
def _installed_kernelspec(name: str) -> tuple | None:
    try:
        from jupyter_client.kernelspec import KernelSpecManager

        spec = KernelSpecManager().get_kernel_spec(name)
        return spec.display_name, spec.language
    except Exception:  # not installed here: Lab will start another, and that is a change to save
        return None


def _as_lab_writes_it(nb) -> None:
    """The header's kernelspec as JupyterLab writes it once the kernel runs (the installed kernel's display
    name, "Python 3 (ipykernel)"), so that starting the kernel does not make a chapter "modified";
    :func:`for_disk` puts the file's own back on save."""
    ks = nb.get("metadata", {}).get("kernelspec")
    found = _installed_kernelspec(ks.get("name", "")) if isinstance(ks, dict) else None
    if found:
        nb.metadata["kernelspec"] = {"display_name": found[0], "language": found[1], "name": ks["name"]}


def _to_write(model: dict, kernelspec: dict | None = None) -> dict:
    """A model JupyterLab saves, as the base manager should write it (the reader's copy is left alone)."""
    if model.get("type") == "notebook" and model.get("content") is not None:
        model = dict(model, content=_copy(model["content"]))
        for_disk(model["content"], kernelspec)
    return model


def _kernelspec_on_disk(manager, path: str) -> dict | None:
    """The kernelspec in the header of the text notebook ``path`` as it is on disk (None if none)."""
    try:
        os_path = manager._get_os_path(path.strip("/"))
        if not os.path.isfile(os_path) or os_path.endswith(".ipynb"):
            return None
        import jupytext

        return jupytext.read(os_path).metadata.get("kernelspec")
    except Exception:  # a file jupytext cannot read: nothing to keep
        return None


def _wrap(base):
    """A contents manager class: ``base`` (jupytext's) with :func:`for_lab` on read, :func:`for_disk` on save."""
    import asyncio

    if asyncio.iscoroutinefunction(base.get):
        class Manager(base):
            async def get(self, path, content=True, type=None, format=None, **kw):
                return _opened(await super().get(path, content=content, type=type, format=format, **kw),
                               content, path, self)

            async def save(self, model, path=""):
                return await super().save(_to_write(model, _kernelspec_on_disk(self, path)), path)
    else:
        class Manager(base):
            def get(self, path, content=True, type=None, format=None, **kw):
                return _opened(super().get(path, content=content, type=type, format=format, **kw), content, path,
                               self)

            def save(self, model, path=""):
                return super().save(_to_write(model, _kernelspec_on_disk(self, path)), path)
    Manager.__name__ = Manager.__qualname__ = f"Labsim{base.__name__}"
    return Manager


def _copy(nb):
    import nbformat

    return nbformat.from_dict(json.loads(json.dumps(nb)))


try:
    import jupytext as _jt

    #: what JupyterLab runs (jupytext's asynchronous manager), and a synchronous twin for scripts and tests
    LabContentsManager = _wrap(_jt.AsyncTextFileContentsManager)
    SyncLabContentsManager = _wrap(_jt.TextFileContentsManager)
except ImportError:  # pragma: no cover - jupytext is part of the book's environment
    LabContentsManager = SyncLabContentsManager = None

#: JupyterLab settings: markdown files open as notebooks (jupytext); every cell of a chapter is drawn
#: (not only those on screen), so that reading, searching and printing see the whole chapter
OVERRIDES = {
    "@jupyterlab/docmanager-extension:plugin": {
        "defaultViewers": {"markdown": "Jupytext Notebook", "myst": "Jupytext Notebook"}},
    "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"},
}


def write_overrides(prefix: Path = Path(sys.prefix)) -> Path:
    path = prefix / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    current = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    current.update(OVERRIDES)
    path.write_text(json.dumps(current, indent=2), encoding="utf-8")
    return path


def command(root: Path, port: int | None = None, extra=(), edition: str = "en") -> tuple[list[str], dict]:
    """The command line and environment that start JupyterLab for the book (``make lab`` runs it).
    ``edition="ko"`` opens the Korean chapters (``ko/chapters``; their kernels draw in Korean)."""
    cmd = [sys.executable, "-m", "jupyterlab", "--ServerApp.ip=127.0.0.1", f"--ServerApp.root_dir={root}",
           "--LabApp.default_url=/lab/tree/" + ("ko/chapters" if edition == "ko" else "chapters"),
           "--ServerApp.contents_manager_class=labsim_lab.LabContentsManager"]
    if port:
        cmd += [f"--ServerApp.port={port}", "--ServerApp.port_retries=0"]
    if hasattr(os, "getuid") and os.getuid() == 0:
        cmd.append("--allow-root")
    cmd += list(extra)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), *filter(None, [env.get("PYTHONPATH")])])
    return cmd, env


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=str(REPO), help="server root (default: the repository)")
    ap.add_argument("--port", type=int, default=None)
    ap.add_argument("--no-browser", action="store_true", help="do not open a web browser")
    ap.add_argument("--edition", choices=("en", "ko"), default="en",
                    help="open the English chapters (chapters/) or the Korean ones (ko/chapters/)")
    ap.add_argument("extra", nargs="*", help="more options for jupyter lab (after --)")
    args, unknown = ap.parse_known_args(argv)
    write_overrides()
    extra = (["--no-browser"] if args.no_browser else []) + unknown + args.extra
    cmd, env = command(Path(args.root), args.port, extra, args.edition)
    return subprocess.call(cmd, env=env)


if __name__ == "__main__":
    sys.exit(main())
