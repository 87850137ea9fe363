"""The program `capy setup` registers for hooks: `python -I -S .../capy/hookstart.py hook ...`.

A hook is a fresh process on every tool call. The console script pip writes imports `re`
before capy runs (half a bare interpreter start), and the `site` module, which `-S` skips,
scans site-packages and runs its .pth files. A hook's own path needs neither: capy's package
folder is added to the end of the path (after the standard library, so nothing shadows it),
and site-packages come back on the first import that needs them (capy.entry.run_lean). `-I`
keeps the project's folder and PYTHON* variables out of the import path: a hook runs in the
agent's working directory, whose files must not be importable by it.
"""

import sys

_here = __file__
for _ in range(2):  # .../capy/hookstart.py -> the folder that holds the capy package
    _here = _here[: max(_here.rfind("/"), _here.rfind("\\"), 0)]
if _here and _here not in sys.path:
    sys.path.append(_here)

from capy.entry import run_lean  # noqa: E402

run_lean()
