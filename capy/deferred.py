"""Standard-library modules a short command imports but never uses, executed on first use.

`dataclasses` imports `inspect` (with `ast`, `dis` and `tokenize` behind it) only to write a
docstring for a class that has none, and `pathlib` imports `urllib.parse`, which imports
`ipaddress` (building a dozen networks as it loads) only to check a bracketed URL host.
Together they cost a warm `capy search` or `stats` about a bare Python start. Before anything
imports them, `defer` puts a stand-in module under each name: `import inspect` binds the
stand-in, and the first attribute anyone reads from it imports the real module, which then
takes the stand-in's place in `sys.modules` and lends it its namespace, so code holding either
sees the same functions. Nothing changes for a process that does use them but the moment they
load; capy's own dataclasses carry docstrings, so that moment never comes in those commands.

`pathlib` takes one name from `urllib.parse` as it loads (`quote_from_bytes`, for `as_uri`
alone), and a from-import reads the attribute at once. So that stand-in holds a forwarder under
that name, which imports the real module when it is called; the parent package gets the
stand-in as its attribute, as an import would give it.

`datetime` is a different case: the module defines every class in Python, then replaces them
all with its C accelerator's (`from _datetime import *`) and deletes its helpers, so its public
namespace is `_datetime`'s. `defer` builds that namespace from `_datetime` directly, which spares
executing a 100 KB module (SQLCipher's adapters and the store's timestamps import it).

Only for short-lived commands (`capy.cli.quick`): a long-lived process gains nothing.
"""

from __future__ import annotations

import sys
from types import ModuleType

# Heavy to import, and reached in a warm search or stats only through the imports named above.
DEFERRED = ("inspect", "ipaddress", "urllib.parse")
# Names a module takes from a deferred one while it loads: (module, name).
FORWARDED = (("urllib.parse", "quote_from_bytes"),)
# Pure-Python modules whose public names are, once imported, all their C accelerator's.
ACCELERATED = (("datetime", "_datetime"),)


class _OnFirstUse(ModuleType):
    """A stand-in that imports the real module the first time an attribute is read from it."""

    def __getattr__(self, attribute: str) -> object:
        if attribute == "__path__":  # asked by every from-import; none of these is a package
            raise AttributeError(attribute)
        name = self.__name__
        if sys.modules.get(name) is self:
            del sys.modules[name]
        __import__(name)  # the module (and its package, which the import system sets it on)
        real = sys.modules[name]
        self.__dict__.update(real.__dict__)
        return getattr(real, attribute)


def defer(names: tuple[str, ...] = DEFERRED) -> None:
    """Put a stand-in under each of `names` not imported yet."""
    for name in names:
        if name not in sys.modules:
            stand_in = sys.modules[name] = _OnFirstUse(name)
            parent, _, child = name.rpartition(".")
            if parent:
                setattr(__import__(parent), child, stand_in)
    for name, attribute in FORWARDED:
        stand_in = sys.modules.get(name)
        if isinstance(stand_in, _OnFirstUse):
            vars(stand_in)[attribute] = _forwarder(stand_in, attribute)
    for name, accelerator in ACCELERATED:
        if name not in sys.modules:
            _stand_in_for(name, accelerator)


def _forwarder(stand_in: _OnFirstUse, attribute: str) -> object:
    def forward(*arguments: object, **options: object) -> object:
        real = _OnFirstUse.__getattr__(stand_in, attribute)  # imports it the first time
        return real(*arguments, **options)  # type: ignore[operator]

    return forward


def _stand_in_for(name: str, accelerator: str) -> None:
    """The module `name` as importing it leaves it: the accelerator's names under its name."""
    try:
        fast = __import__(accelerator)
    except ImportError:
        return  # an interpreter without it: the Python module is the real thing
    module = ModuleType(name, fast.__doc__)
    public = {key: value for key, value in vars(fast).items() if not key.startswith("__")}
    module.__dict__.update(public)
    # What `from datetime import *` gives: the classes and constants, not the C API capsule.
    module.__all__ = tuple(key for key in public if not key.endswith("_CAPI"))  # type: ignore[attr-defined]
    sys.modules[name] = module
