"""A sealed memfd: readable by path, changed by nobody (root included), exactly what was put."""

from __future__ import annotations

import os

import pytest

from capy.executor import sealed

pytestmark = pytest.mark.skipif(not sealed.available(), reason="no sealed memfds here (Linux)")


def test_a_sealed_file_holds_exactly_the_bytes_and_reads_by_path() -> None:
    data = b"exec </dev/null; echo 'two\nlines'\n" * 200
    fd = sealed.sealed_file(data)
    assert fd is not None
    try:
        with open(f"/proc/{os.getpid()}/fd/{fd}", "rb") as handle:
            assert handle.read() == data
    finally:
        os.close(fd)


def test_nobody_can_change_a_sealed_file_through_proc() -> None:
    fd = sealed.sealed_file(b"echo mine\n")
    assert fd is not None
    try:
        path = f"/proc/{os.getpid()}/fd/{fd}"
        with pytest.raises(PermissionError), open(path, "r+b", buffering=0) as handle:
            handle.write(b"touch /x")
        with pytest.raises(PermissionError), open(path, "wb"):  # O_TRUNC: a shrink
            pass
        with pytest.raises(PermissionError), open(path, "ab", buffering=0) as handle:
            handle.write(b"; touch /x")
        assert os.pread(fd, 100, 0) == b"echo mine\n"
    finally:
        os.close(fd)
