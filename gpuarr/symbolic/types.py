"""Where symbolic values live: the context names of their types (graph.TensorType).

A context is a name: 'cpu' for the host, None for the default device (flag `device`), or a
context name such as 'dev0' (flag `contexts`). `location` turns it into what placement uses:
'cpu' or a `gpuarr.Context`.
"""

from .. import config
from ..context import get_context
from ..errors import ContextNotDefined

__all__ = ["HOST", "location", "location_name"]

HOST = "cpu"


def location(context):
    """'cpu' or the Context that `context` (a name, None for the default device) names;
    ContextNotDefined for unknown names, and for None when flag device=cpu."""
    if isinstance(context, str) and context == HOST:
        return HOST
    if context is None and config.flags.device == "cpu":
        raise ContextNotDefined("the default device is 'cpu' (flag device=cpu), which has no "
                                "device context; name one (e.g. 'dev0') or set flag device")
    return get_context(context)


def location_name(loc):
    return HOST if isinstance(loc, str) else loc.name
