"""What can be checked of a dataset before a job that trains on it is queued, cheaply: an
.npz archive's arrays (their names, shapes and types, read from its headers without loading
the images), its labels (one per image, whole numbers, at least 2 classes), a CIFAR file's
size, an image folder's class folders and that each holds images. A job would otherwise
meet the same fault only once a worker loads the data, minutes after it was queued.
core.data.datasets reads everything again when the job runs."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from . import datasets
from .errors import DatasetError


def check_source(source: str) -> str:
    """A bundled dataset's name, or the path of an existing file or folder (resolved) whose
    arrays, labels and classes pass what can be checked cheaply (check_files below);
    DatasetError otherwise, so a request can be refused before any job is queued."""
    if source in datasets.BUNDLED:
        return source
    path = datasets.existing_path(source)
    check_files(path)
    return str(path)


def check_files(path: Path) -> None:
    """DatasetError naming what is wrong with the dataset at `path` (an existing file or folder)."""
    if path.is_file():
        if path.suffix == ".npz":
            _check_npz(path)
        elif path.suffix == ".bin":
            _check_cifar(path, datasets._cifar_kind(path))
        else:
            raise DatasetError(
                f"{path}: unsupported file type {path.suffix or '(none)'!r}; expected a .npz archive or a CIFAR .bin file"
            )
        return
    for candidate in (path, path / "cifar-10-batches-bin", path / "cifar-100-binary"):
        batches = sorted(candidate.glob("data_batch_*.bin")) or sorted(candidate.glob("train.bin"))
        if batches:
            for f in batches:
                _check_cifar(f, datasets._cifar_kind(f))
            return
    train = path / "train" if (path / "train").is_dir() and (path / "test").is_dir() else path
    classes = datasets._class_folders(train)
    datasets._class_files(train, classes, classes)
    if len(classes) < 2:
        raise DatasetError(f"{train}: a classification dataset needs at least 2 classes, found {len(classes)}")


def _check_cifar(path: Path, kind: str) -> None:
    label_bytes, _, _, _ = datasets._CIFAR[kind]
    record = label_bytes + datasets._PIXELS
    size = path.stat().st_size
    if not size or size % record:
        raise DatasetError(
            f"{path}: {size} bytes is not a whole number of {record}-byte CIFAR records "
            "(truncated or not a CIFAR binary file)"
        )


def _check_npz(path: Path) -> None:
    try:
        with zipfile.ZipFile(path) as archive:
            headers = {name.removesuffix(".npy"): _header(archive, name) for name in archive.namelist()}
            classes: set[int] = set()
            for images, labels in datasets._npz_pairs(path, headers):
                datasets._check_npz_arrays(path, (images, labels), headers[images], headers[labels])
                with archive.open(labels + ".npy") as f:
                    classes.update(np.unique(np.lib.format.read_array(f, allow_pickle=False)).tolist())
    except DatasetError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise DatasetError(f"{path}: cannot read as a NumPy .npz archive ({e})") from None
    if len(classes) < 2:
        raise DatasetError(f"{path}: a classification dataset needs at least 2 classes, found {len(classes)}")


def _header(archive: zipfile.ZipFile, name: str) -> datasets.ArrayHeader:
    """(shape, dtype) of one array of the archive, from its header alone."""
    with archive.open(name) as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(f)
        else:  # a format too new for a header-only look: read the array
            f.seek(0)
            array = np.lib.format.read_array(f, allow_pickle=False)
            shape, dtype = array.shape, array.dtype
    return shape, dtype
