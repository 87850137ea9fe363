"""The server's heap settings (capy.server.upkeep.tune_heap), in a real process: a large block
freed goes back to the system, where glibc's default would keep the next one in its heap."""

from __future__ import annotations

import subprocess
import sys

import pytest

# Frees a 16 MB block (glibc's default then raises its mmap threshold to that size), takes and
# fills an 8 MB one, frees it, and prints how much of it the process still holds, in MB.
_HELD_AFTER_FREE = """
import sys
if sys.argv[1] == "tuned":
    from capy.server.upkeep import tune_heap
    tune_heap()
def resident():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) // 1024
first = bytearray(16 << 20)
del first
before = resident()
second = bytearray(8 << 20)
second[:] = b"x" * len(second)
del second
print(resident() - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc and /proc are Linux's")
def test_a_freed_large_block_goes_back_to_the_system():
    def held(mode: str) -> int:
        argv = [sys.executable, "-c", _HELD_AFTER_FREE, mode]
        return int(subprocess.run(argv, capture_output=True, check=True, text=True).stdout)

    assert held("default") >= 6, "glibc's default kept the block (the case being fixed)"
    assert held("tuned") <= 2
