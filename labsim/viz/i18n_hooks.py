"""IPython's side of labsim's languages (:mod:`labsim.support.i18n`): installed when ``labsim.viz`` is
imported, so that every output of a kernel follows :func:`labsim.set_language` and, in the book build,
carries its Korean rendition."""
from __future__ import annotations

from ..support.i18n import _bundle


def install_hooks() -> bool:
    """Make this IPython kernel's outputs follow :func:`set_language`, and in the book build carry
    their Korean rendition (:data:`KO_MIME`), so that the Korean site is built from the English build's
    one execution. Called when labsim is imported; does nothing outside IPython."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    ip = get_ipython()
    if ip is None or getattr(ip, "_labsim_ko_hooks", False):
        return False
    pub, hook = ip.display_pub, ip.displayhook
    publish, write = pub.publish, hook.write_format_data

    def _publish(data, metadata=None, *args, **kw):
        return publish(_bundle(data), metadata, *args, **kw)

    def _write(format_dict, md_dict=None):
        return write(_bundle(format_dict), md_dict)

    pub.publish = _publish
    hook.write_format_data = _write
    ip._labsim_ko_hooks = True
    return True
