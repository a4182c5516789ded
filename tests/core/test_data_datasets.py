"""Datasets: the bundled digits, CIFAR binary files, .npz archives and image folders,
seeded splits, and clear errors for every kind of bad file."""

from __future__ import annotations

import numpy as np
import pytest

from core.data.bundled import CANVAS, SCAN
from core.data.datasets import load_dataset, split_dataset
from core.data.errors import DatasetError
from core.errors import TesseraError


def cifar_records(labels, label_bytes=1, seed=0) -> tuple[bytes, np.ndarray]:
    rng = np.random.default_rng(seed)
    pixels = rng.integers(0, 256, (len(labels), 3, 32, 32), dtype=np.uint8)
    head = np.array([[0] * (label_bytes - 1) + [lab] for lab in labels], np.uint8)
    return np.concatenate([head, pixels.reshape(len(labels), -1)], axis=1).tobytes(), pixels


def test_digits_default_is_real_upscaled_and_three_channel():
    data = load_dataset("digits", 16)
    assert data.images.shape == (1797, 3, 16, 16) and data.images.dtype == np.float32
    assert data.num_classes == 10 and set(np.unique(data.labels)) == set(range(10))
    assert data.images.min() >= 0.0 and data.images.max() <= 1.0
    assert np.array_equal(data.images[:, 0], data.images[:, 2])
    assert load_dataset("digits", 32).images.shape[-2:] == (32, 32)


def test_shifted_digits_are_the_real_scans_at_seeded_places_and_need_no_network(monkeypatch):
    """Every image is its scan, untouched, somewhere on the black canvas; the places cover the
    canvas, and the same on every call (a fixed dataset, not augmentation). Nothing is fetched."""
    import socket

    def refuse(*args, **kwargs):
        raise AssertionError("a bundled dataset opened a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    scans = load_dataset("digits", 8)
    data = load_dataset("digits-shifted", CANVAS)
    assert data.images.shape == (1797, 3, CANVAS, CANVAS) and data.images.dtype == np.float32
    assert np.array_equal(data.labels, scans.labels) and data.classes == scans.classes
    places = set()
    for image, scan in zip(data.images[:, 0], scans.images[:, 0]):
        r, c = _place(image, scan)
        placed = np.zeros_like(image)
        placed[r : r + SCAN, c : c + SCAN] = scan
        assert np.array_equal(image, placed)
        places.add((r, c))
    assert {(0, 0), (CANVAS - SCAN, CANVAS - SCAN)} <= places and len(places) > 60
    assert np.array_equal(load_dataset("digits-shifted", CANVAS).images, data.images)
    assert load_dataset("digits-shifted", 32).images.shape == (1797, 3, 32, 32)


def _place(image: np.ndarray, scan: np.ndarray) -> tuple[int, int]:
    """Where on the canvas `scan` sits: the one offset at which it matches."""
    found = [
        (r, c)
        for r in range(image.shape[0] - SCAN + 1)
        for c in range(image.shape[1] - SCAN + 1)
        if np.array_equal(image[r : r + SCAN, c : c + SCAN], scan)
    ]
    assert found, "the scan is not on the canvas"
    return found[0]


def test_split_is_seeded_stratified_and_standardised():
    data = load_dataset("digits", 8)
    a, b, c = (split_dataset(data, 0.25, seed=s) for s in (1, 1, 2))
    assert np.array_equal(a.val.labels, b.val.labels) and np.array_equal(a.train.images, b.train.images)
    assert not np.array_equal(a.val.images, c.val.images)
    assert len(a.train) + len(a.val) + len(a.test) == len(data)
    assert len(a.test) == pytest.approx(0.2 * len(data), abs=1)  # the default test fraction
    assert len(a.val) == pytest.approx(0.25 * (len(data) - len(a.test)), abs=1)
    counts = np.bincount(a.val.labels, minlength=10)
    assert counts.min() >= 30  # every class present in proportion
    assert abs(float(a.train.images.mean())) < 1e-3 and float(a.train.images.std()) == pytest.approx(1.0, abs=1e-2)
    small = split_dataset(data, 0.2, seed=0, limit=100)
    assert len(small.train) + len(small.val) == 100 and set(small.val.labels) == set(range(10))
    with pytest.raises(DatasetError, match="validation fraction must be between 0 and 1"):
        split_dataset(data, 1.5)
    with pytest.raises(DatasetError, match="test fraction must be between 0 and 1"):
        split_dataset(data, test_fraction=0.0)


@pytest.mark.parametrize("source", ["digits", "own"])
def test_validation_and_test_never_overlap_and_the_test_split_is_the_same_for_every_seed(source, tmp_path):
    """Whatever the seed and the sample size, the three parts are disjoint and cover what they
    were drawn from, and the test part is the same examples (held out by the dataset's files,
    or drawn with the fixed TEST_SEED), so every training seed is tested alike."""
    if source == "own":
        rng = np.random.default_rng(0)
        np.savez(
            tmp_path / "own.npz",
            x_train=rng.random((120, 8, 8)),
            y_train=np.arange(120) % 4,
            x_test=rng.random((40, 8, 8)),
            y_test=np.arange(40) % 4,
        )
        source = str(tmp_path / "own.npz")
    data = load_dataset(source, 8)
    tests = []
    for seed, limit in ((0, None), (1, None), (2, 60), (3, 100)):
        split = split_dataset(data, 0.25, seed=seed, limit=limit)
        train, val, test = (set(split.index[part].tolist()) for part in ("train", "val", "test"))
        assert not (val & test) and not (train & test) and not (train & val)
        assert np.array_equal(split.test.labels, data.labels[split.index["test"]])
        assert len(train | val) == (limit or len(data) - len(test))
        tests.append(split.index["test"])
    assert all(np.array_equal(t, tests[0]) for t in tests)
    if data.held_out is not None:
        assert np.array_equal(tests[0], np.flatnonzero(data.held_out)) and len(tests[0]) == 40


def test_cifar10_binary_folder(tmp_path):
    raw1, px1 = cifar_records([3, 0, 9])
    raw2, _ = cifar_records([1, 1], seed=1)
    (tmp_path / "data_batch_1.bin").write_bytes(raw1)
    (tmp_path / "data_batch_2.bin").write_bytes(raw2)
    (tmp_path / "test_batch.bin").write_bytes(cifar_records([5])[0])
    (tmp_path / "batches.meta.txt").write_text("\n".join(f"class{i}" for i in range(10)) + "\n")
    data = load_dataset(str(tmp_path), 32)
    assert data.name == "cifar10" and data.labels.tolist() == [3, 0, 9, 1, 1, 5]  # the test batch last
    assert data.held_out.tolist() == [False] * 5 + [True]  # the archive's own test split
    assert data.classes[3] == "class3" and data.num_classes == 10
    assert np.allclose(data.images[0], px1[0] / 255.0)
    one = load_dataset(str(tmp_path / "data_batch_1.bin"), 16)
    assert one.images.shape == (3, 3, 16, 16) and one.held_out.tolist() == [False] * 3


def test_cifar100_binary_uses_fine_labels_and_parent_folder(tmp_path):
    folder = tmp_path / "cifar-100-binary"
    folder.mkdir()
    raw, _ = cifar_records([99, 0, 42], label_bytes=2)
    (folder / "train.bin").write_bytes(raw)
    data = load_dataset(str(tmp_path), 16)
    assert data.name == "cifar100" and data.labels.tolist() == [99, 0, 42] and data.num_classes == 100
    (folder / "test.bin").write_bytes(cifar_records([7], label_bytes=2)[0])
    with_test = load_dataset(str(tmp_path), 16)
    assert with_test.labels.tolist() == [99, 0, 42, 7] and with_test.held_out.tolist() == [False] * 3 + [True]


def test_truncated_and_corrupt_cifar_files_are_rejected(tmp_path):
    raw, _ = cifar_records([1, 2])
    (tmp_path / "data_batch_1.bin").write_bytes(raw[:-100])
    with pytest.raises(DatasetError, match=r"data_batch_1\.bin: 6046 bytes is not a whole number of 3073-byte"):
        load_dataset(str(tmp_path), 16)
    bad = bytearray(raw)
    bad[0] = 12  # CIFAR-10 labels are 0..9
    (tmp_path / "data_batch_1.bin").write_bytes(bytes(bad))
    with pytest.raises(DatasetError, match="record 0 has label 12, but cifar10 has 10 classes"):
        load_dataset(str(tmp_path), 16)
    (tmp_path / "data_batch_1.bin").write_bytes(b"")
    with pytest.raises(DatasetError, match="0 bytes"):
        load_dataset(str(tmp_path / "data_batch_1.bin"), 16)
    other = tmp_path / "mystery.bin"
    other.write_bytes(raw)
    with pytest.raises(DatasetError, match="not a CIFAR binary file name"):
        load_dataset(str(other), 16)


def test_npz_layouts(tmp_path):
    rng = np.random.default_rng(0)
    nhwc = rng.integers(0, 256, (12, 10, 10, 3), dtype=np.uint8)
    labels = np.array([7, 9] * 6)
    np.savez(tmp_path / "a.npz", images=nhwc, labels=labels)
    data = load_dataset(str(tmp_path / "a.npz"), 8)
    assert data.images.shape == (12, 3, 8, 8) and data.classes == ("7", "9")
    assert data.labels.tolist() == [0, 1] * 6 and data.images.min() >= 0 and data.images.max() <= 1
    np.savez(tmp_path / "b.npz", x_train=rng.random((6, 1, 9, 9)), y_train=np.arange(6) % 2)
    assert load_dataset(str(tmp_path / "b.npz"), 9).images.shape == (6, 3, 9, 9)
    np.savez(tmp_path / "c.npz", images=rng.random((4, 8, 8)).astype(np.float32), labels=np.array([0, 1, 0, 1]))
    assert load_dataset(str(tmp_path / "c.npz"), 8).images.shape == (4, 3, 8, 8)
    np.savez(
        tmp_path / "d.npz",
        images=nhwc,
        labels=labels,
        test_images=nhwc[:3],
        test_labels=np.array([9, 9, 7]),
    )
    own = load_dataset(str(tmp_path / "d.npz"), 8)
    assert own.held_out.tolist() == [False] * 12 + [True] * 3 and own.labels[-3:].tolist() == [1, 1, 0]
    assert np.array_equal(own.images[12:], own.images[:3])  # the same pixels, scaled alike


@pytest.mark.parametrize(
    "arrays, message",
    [
        (
            {"pictures": np.zeros((4, 8, 8)), "labels": np.zeros(4, int)},
            "missing arrays; expected images and labels .*found pictures, labels",
        ),
        ({"images": np.zeros((4, 8, 8)), "y": np.zeros(4, int)}, "missing arrays"),
        ({"images": np.zeros((4, 5, 8, 8)), "labels": np.zeros(4, int)}, r"has shape \(4, 5, 8, 8\); expected"),
        ({"images": np.zeros((4, 8)), "labels": np.zeros(4, int)}, r"has shape \(4, 8\)"),
        ({"images": np.zeros((4, 8, 8)), "labels": np.zeros(3, int)}, "one label per image"),
        ({"images": np.zeros((4, 8, 8)), "labels": np.zeros(4)}, "1-d integer array"),
        ({"images": np.array(["a", "b"]), "labels": np.zeros(2, int)}, "non-empty numeric array"),
        ({"images": np.full((2, 8, 8), np.nan), "labels": np.arange(2)}, "NaN"),
        ({"images": np.zeros((4, 8, 8)), "labels": np.zeros(4, int)}, "at least 2 classes"),
        (
            {"x_train": np.zeros((4, 8, 8)), "y_train": np.arange(4), "x_test": np.zeros((2, 8, 8))},
            "x_test has no y_test beside it",
        ),
        (
            {"images": np.zeros((4, 8, 8)), "labels": np.arange(4), "test_labels": np.arange(2)},
            "test_labels has no test_images beside it",
        ),
        (
            {
                "images": np.zeros((4, 8, 8)),
                "labels": np.arange(4),
                "test_images": np.zeros((2, 9, 9)),
                "test_labels": np.arange(2),
            },
            r"test_images are \(1, 9, 9\) \(C, H, W\) but images are \(1, 8, 8\)",
        ),
        (
            {
                "images": np.zeros((4, 8, 8)),
                "labels": np.arange(4),
                "test_images": np.zeros((2, 8, 8)),
                "test_labels": np.arange(3),
            },
            "test_labels must be a 1-d integer array with one label per image",
        ),
    ],
)
def test_bad_npz_contents_are_rejected(tmp_path, arrays, message):
    path = tmp_path / "bad.npz"
    np.savez(path, **arrays)
    with pytest.raises(DatasetError, match=message) as err:
        load_dataset(str(path), 8)
    assert str(path) in str(err.value)


def test_npz_never_unpickles_and_corrupt_archives_fail_clearly(tmp_path):
    path = tmp_path / "objects.npz"
    np.savez(path, images=np.array([{"a": 1}, None], dtype=object), labels=np.zeros(2, int))
    with pytest.raises(DatasetError, match="cannot read as a NumPy .npz archive.*(pickle|Object arrays)"):
        load_dataset(str(path), 8)
    truncated = tmp_path / "truncated.npz"
    np.savez(truncated, images=np.zeros((4, 8, 8)), labels=np.arange(4))
    truncated.write_bytes(truncated.read_bytes()[:50])
    with pytest.raises(DatasetError, match="truncated.npz: cannot read"):
        load_dataset(str(truncated), 8)


def test_bad_paths_and_folders(tmp_path):
    with pytest.raises(DatasetError, match="nowhere: no such file or folder"):
        load_dataset(str(tmp_path / "nowhere"), 16)
    with pytest.raises(DatasetError, match="no CIFAR .bin files and no class subfolders"):
        load_dataset(str(tmp_path), 16)
    (tmp_path / "cats").mkdir()
    (tmp_path / "cats" / "notes.txt").write_text("no images here")
    with pytest.raises(DatasetError, match="cats: class folder has no images"):
        load_dataset(str(tmp_path), 16)
    text = tmp_path / "data.csv"
    text.write_text("1,2,3")
    with pytest.raises(DatasetError, match="unsupported file type '.csv'"):
        load_dataset(str(text), 16)
    with pytest.raises(DatasetError, match="resolution"):
        load_dataset("digits", 2)
    assert issubclass(DatasetError, TesseraError)


def test_image_folder(tmp_path):
    Image = pytest.importorskip("PIL.Image", reason="reading image folders needs Pillow")
    rng = np.random.default_rng(0)
    for cls in ("ants", "bees"):
        (tmp_path / cls).mkdir()
        for i in range(3):
            Image.fromarray(rng.integers(0, 256, (20, 14, 3), dtype=np.uint8)).save(tmp_path / cls / f"{i}.png")
    data = load_dataset(str(tmp_path), 8)
    assert data.classes == ("ants", "bees") and data.labels.tolist() == [0, 0, 0, 1, 1, 1]
    assert data.images.shape == (6, 3, 8, 8)
    assert data.held_out is None
    (tmp_path / "bees" / "broken.png").write_bytes(b"\x89PNG not really")
    with pytest.raises(DatasetError, match="broken.png: cannot read as an image"):
        load_dataset(str(tmp_path), 8)


def test_image_folder_with_train_and_test_subfolders(tmp_path):
    Image = pytest.importorskip("PIL.Image", reason="reading image folders needs Pillow")
    rng = np.random.default_rng(0)
    for part, classes in (("train", ("ants", "bees", "wasps")), ("test", ("bees", "ants"))):
        for cls in classes:
            (tmp_path / part / cls).mkdir(parents=True)
            for i in range(2):
                Image.fromarray(rng.integers(0, 256, (9, 9, 3), dtype=np.uint8)).save(
                    tmp_path / part / cls / f"{i}.png"
                )
    data = load_dataset(str(tmp_path), 8)
    assert data.classes == ("ants", "bees", "wasps")  # train's classes, not "test" and "train"
    assert data.labels.tolist() == [0, 0, 1, 1, 2, 2, 0, 0, 1, 1]  # test's images labelled by name
    assert data.held_out.tolist() == [False] * 6 + [True] * 4
    (tmp_path / "test" / "moths").mkdir()
    with pytest.raises(DatasetError, match=r"test: class folder\(s\) moths have no counterpart in .*train"):
        load_dataset(str(tmp_path), 8)


def test_bundled_fashion_mnist_is_real_28px_clothing_with_its_own_test_split(monkeypatch):
    import socket

    def refuse(*args, **kwargs):
        raise AssertionError("a bundled dataset opened a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    data = load_dataset("fashion-mnist", 28)
    assert data.classes[0] == "T-shirt/top" and data.classes[-1] == "Ankle boot" and data.num_classes == 10
    assert data.images.shape[1:] == (3, 28, 28) and data.images.min() >= 0.0 and data.images.max() <= 1.0
    assert data.held_out is not None and 0 < data.held_out.sum() < len(data)
    for part in (data.held_out, ~data.held_out):  # both parts hold every class alike
        counts = np.bincount(data.labels[part], minlength=10)
        assert counts.min() == counts.max() > 0
    trouser, bag = data.images[data.labels == 1, 0].mean(axis=0), data.images[data.labels == 8, 0].mean(axis=0)
    legs = trouser[24, 8:20]  # near the hem: two legs with the gap between them
    assert legs[[3, 4, 8, 9]].min() > 3 * legs[6]
    assert bag.mean() > trouser.mean()  # a bag covers more of its picture than a pair of trousers
