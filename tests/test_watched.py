"""The environment an on-disk answer depends on (capy.watched.environment): the variables that
can change settings or where files are found, and only their values read."""

from __future__ import annotations

import os
from collections.abc import Iterator, MutableMapping

from capy import watched


class _ReadCounting(MutableMapping[str, str]):
    """An environment that records whose values were read."""

    def __init__(self, values: dict[str, str]) -> None:
        self.values = values
        self.read: list[str] = []

    def __getitem__(self, name: str) -> str:
        self.read.append(name)
        return self.values[name]

    def __setitem__(self, name: str, value: str) -> None:
        self.values[name] = value

    def __delitem__(self, name: str) -> None:
        del self.values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)


def test_only_the_kept_variables_values_are_read(monkeypatch):
    counting = _ReadCounting(
        {
            "HOME": "/home/someone",
            "CAPY_DB_PATH": "/data/kb.db",
            "CAPY_DB_KEY": "a" * 64,
            "PATH": "/usr/bin",
            **{f"UNRELATED_{number}": "x" * 100 for number in range(50)},
        }
    )
    monkeypatch.setattr(os, "environ", counting)
    assert watched.environment() == [["CAPY_DB_PATH", "/data/kb.db"], ["HOME", "/home/someone"]]
    assert sorted(counting.read) == ["CAPY_DB_PATH", "HOME"], "read values it leaves out"
