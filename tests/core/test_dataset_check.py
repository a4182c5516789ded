"""A dataset is checked before any job is queued on it (core.data.dataset_check): an .npz's
arrays and labels from its headers, its classes, a CIFAR file's size, an image folder's class
folders; `tessera evaluate` refuses a faulty one at once, naming the file, and queues nothing."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

from app.cli import main
from core.data.dataset_check import check_source
from core.data.errors import DatasetError
from tests.support import EXAMPLES


def npz(path, **arrays):
    np.savez(path, **arrays)
    return path


def class_folders(path, **images):
    """An image-folder dataset: for each class, a folder of that many (empty) .png files."""
    for name, count in images.items():
        (path / name).mkdir()
        for i in range(count):
            (path / name / f"{i}.png").touch()
    return path


GOOD = {"images": np.zeros((6, 8, 8), np.uint8), "labels": np.array([0, 1] * 3)}
CASES = {
    "no arrays": (lambda p: npz(p / "a.npz", pictures=GOOD["images"]), "missing arrays; expected images and labels"),
    "labels of floats": (
        lambda p: npz(p / "a.npz", images=GOOD["images"], labels=np.zeros(6)),
        "labels must be a 1-d integer array with one label per image (6), got dtype float64",
    ),
    "a label short": (
        lambda p: npz(p / "a.npz", images=GOOD["images"], labels=np.array([0, 1] * 2 + [1])),
        "labels must be a 1-d integer array with one label per image (6)",
    ),
    "images of text": (
        lambda p: npz(p / "a.npz", images=np.array(["a"] * 6), labels=GOOD["labels"]),
        "images must be a non-empty numeric array",
    ),
    "images of 5 dimensions": (
        lambda p: npz(p / "a.npz", images=np.zeros((6, 2, 2, 8, 8)), labels=GOOD["labels"]),
        "images has shape (6, 2, 2, 8, 8); expected [N, H, W]",
    ),
    "one class": (
        lambda p: npz(p / "a.npz", images=GOOD["images"], labels=np.zeros(6, np.int64)),
        "a classification dataset needs at least 2 classes, found 1",
    ),
    "test images alone": (
        lambda p: npz(p / "a.npz", **GOOD, test_images=GOOD["images"]),
        "test_images has no test_labels beside it",
    ),
    "not a zip": (lambda p: (p / "a.npz").write_bytes(b"PK\x03\x04 no") and p / "a.npz", "cannot read as a NumPy .npz"),
    "a cut CIFAR file": (
        lambda p: (p / "data_batch_1.bin").write_bytes(b"\0" * 3000) and p / "data_batch_1.bin",
        "3000 bytes is not a whole number of 3073-byte CIFAR records",
    ),
    "one class folder": (lambda p: class_folders(p, cats=1), "found 1"),
    "an empty class folder": (lambda p: class_folders(p, cats=1, dogs=0), "dogs: class folder has no images"),
}


@pytest.mark.parametrize("case", CASES)
def test_a_faulty_dataset_is_refused_before_queueing(tmp_path, capsys, case):
    make, said = CASES[case]
    folder = tmp_path / "data"
    folder.mkdir()
    source = make(folder)
    with pytest.raises(DatasetError, match=f"^{source}"):
        check_source(str(source))
    store = tmp_path / "s.db"
    assert main(["evaluate", str(EXAMPLES / "conv2d.json"), "--store", str(store), "--dataset", str(source)]) == 1
    assert said in capsys.readouterr().err
    assert not store.exists()  # nothing queued: no store made


def test_a_good_archive_passes_with_its_test_split(tmp_path):
    source = npz(tmp_path / "a.npz", **GOOD, test_images=GOOD["images"][:2], test_labels=GOOD["labels"][:2])
    assert check_source(str(source)) == str(source.resolve())
    with zipfile.ZipFile(source) as archive:  # what was read: headers, and the labels
        assert sorted(archive.namelist()) == ["images.npy", "labels.npy", "test_images.npy", "test_labels.npy"]
