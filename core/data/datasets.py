"""Image classification datasets: the bundled ones, or the user's own files.

Nothing is downloaded and nothing is unpickled. A name in core.data.bundled.BUNDLED picks a
bundled dataset: the default, "fashion-mnist", a subset of Fashion-MNIST with its own test
split, or one made from scikit-learn's 8x8 handwritten digits (1797 real scans, 10 classes),
upscaled and replicated to 3 channels ("digits-shifted" puts each scan at a seeded random
place on a larger canvas). A path may name:

- CIFAR-10/100 in the official *binary* format: a folder with `data_batch_*.bin`
  (CIFAR-10) or `train.bin` (CIFAR-100), the folder above it, or one such file;
- a `.npz` archive with `images` and `labels` (or Keras's `x_train`, `y_train`),
  images as [N, H, W], [N, H, W, C] or [N, C, H, W] with C in 1 or 3;
- an image-folder tree, one subfolder per class (read with Pillow).

Where the files set a test split apart, it is kept as the dataset's own (`held_out`): CIFAR's
`test_batch.bin` / `test.bin` beside the training files, an archive's `test_images` and
`test_labels` (Keras: `x_test`, `y_test`), an image folder with `train` and `test`
subfolders, each one subfolder per class.

Every dataset comes out as float32 images [N, 3, R, R] in [0, 1] at the requested
resolution R and int64 labels 0..classes-1. split_dataset makes the three parts: the test
split (the dataset's own, else a stratified hold-out drawn with a fixed seed, so every
training seed and sample size is tested on the same examples), and from the rest the
seeded, stratified train/validation split; all three standardised with training statistics.
Selection (early stop, the margin, ranking) reads validation only; the test split is read
only to report a chosen network's accuracy (core.train.seeds).
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .bundled import BUNDLED
from .errors import DatasetError

#: the default proxy task's data, read from here by every default (the one place they live):
#: Fashion-MNIST's subset is the bundled task that can say "equal". Over 10 seeds an operator
#: equal to the original was shown within a 1-point margin by the default seed rule, and the 1x1
#: network was not; on digits-shifted (a 360-image test split) neither held (docs/accuracy.md,
#: bench_discovery's power section)
DEFAULT_DATASET = "fashion-mnist"
DEFAULT_RESOLUTION = 24  # the proxy task's input side: Fashion-MNIST's 28 px photographs, scaled
#: draws the test split of a dataset whose files set none apart: fixed, so every training seed and
#: sample size is tested on the same examples (changing it changes every reported test accuracy)
TEST_SEED = 0
#: what a dataset argument may be, for help texts, tooltips and errors
SOURCES = (
    f"{' or '.join(map(repr, BUNDLED))} (bundled) or a path: a CIFAR binary folder or file, "
    "an .npz archive or an image folder"
)
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".ppm", ".pgm", ".tif", ".tiff", ".webp"}


@dataclass(frozen=True)
class ImageDataset:
    name: str
    images: np.ndarray  # float32 [N, 3, R, R]
    labels: np.ndarray  # int64 [N]
    classes: tuple[str, ...]
    held_out: np.ndarray | None = None  # bool [N]: the dataset's own test split, where its files set one apart

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def num_classes(self) -> int:
        return len(self.classes)

    @property
    def resolution(self) -> int:
        return self.images.shape[-1]

    def subset(self, index: np.ndarray) -> ImageDataset:
        """The examples at `index`, as a dataset without a test split of its own."""
        return ImageDataset(self.name, self.images[index], self.labels[index], self.classes)


@dataclass(frozen=True)
class Split:
    """Training, validation and test parts, standardised with the training part's per-channel
    statistics; `index`: each part's examples as indices into the dataset it was split from."""

    train: ImageDataset
    val: ImageDataset
    test: ImageDataset
    mean: tuple[float, ...]
    std: tuple[float, ...]
    index: dict[str, np.ndarray]


def existing_path(source: str) -> Path:
    """The resolved path of a dataset file or folder; DatasetError naming it when there is none."""
    path = Path(source).expanduser()
    if not path.exists():
        raise DatasetError(f"{path}: no such file or folder; a dataset is {SOURCES}")
    return path.resolve()


# -- entry points --------------------------------------------------------------------
def load_dataset(source: str = DEFAULT_DATASET, resolution: int = DEFAULT_RESOLUTION) -> ImageDataset:
    """A bundled dataset's name or a path (CIFAR binary folder/file, .npz, image folder) -> an ImageDataset."""
    if not isinstance(resolution, int) or isinstance(resolution, bool) or not 4 <= resolution <= 512:
        raise DatasetError(f"resolution must be an integer between 4 and 512 pixels, got {resolution!r}")
    if source in BUNDLED:
        images, labels, classes, held_out = BUNDLED[source]()
        return _finish(source, f"the bundled {source}", images, labels, classes, resolution, held_out=held_out)
    path = existing_path(source)
    if path.is_file():
        if path.suffix == ".npz":
            return _npz(path, resolution)
        if path.suffix == ".bin":
            return _cifar_files([path], _cifar_kind(path), resolution)
        raise DatasetError(
            f"{path}: unsupported file type {path.suffix or '(none)'!r}; expected a .npz archive or a CIFAR .bin file"
        )
    return _folder(path, resolution)


def split_dataset(
    dataset: ImageDataset,
    val_fraction: float = 0.2,
    seed: int = 0,
    limit: int | None = None,
    test_fraction: float = 0.2,
) -> Split:
    """Test, training and validation parts. The test part is the dataset's own test split, or
    else a stratified `test_fraction` of it drawn with TEST_SEED: the same whatever `seed` and
    `limit` say. Of the rest, `limit` first keeps a stratified sample of that many examples (for
    quick proxy runs), then a stratified, seeded split sets `val_fraction` apart for validation
    (the same seed always gives the same split)."""
    from sklearn.model_selection import train_test_split

    for what, fraction in (("validation", val_fraction), ("test", test_fraction)):
        if not 0 < fraction < 1:
            raise DatasetError(f"the {what} fraction must be between 0 and 1, got {fraction!r}")
    index = np.arange(len(dataset))
    try:
        if dataset.held_out is not None:
            index, test = index[~dataset.held_out], index[dataset.held_out]
        else:
            index, test = train_test_split(
                index, test_size=test_fraction, random_state=TEST_SEED, stratify=dataset.labels
            )
        if limit is not None and limit < len(index):
            index, _ = train_test_split(index, train_size=limit, random_state=seed, stratify=dataset.labels[index])
        train, val = train_test_split(index, test_size=val_fraction, random_state=seed, stratify=dataset.labels[index])
    except ValueError as e:
        raise DatasetError(
            f"{dataset.name}: cannot split {len(dataset)} examples of "
            f"{dataset.num_classes} classes into train, validation and test ({e})"
        ) from None
    parts = {"train": np.sort(train), "val": np.sort(val), "test": np.sort(test)}
    train_set = dataset.subset(parts["train"])
    mean = train_set.images.mean(axis=(0, 2, 3), keepdims=True)
    std = train_set.images.std(axis=(0, 2, 3), keepdims=True) + 1e-6

    def standardised(part: str) -> ImageDataset:
        data = dataset.subset(parts[part])
        return ImageDataset(data.name, ((data.images - mean) / std).astype(np.float32), data.labels, data.classes)

    return Split(
        standardised("train"),
        standardised("val"),
        standardised("test"),
        tuple(mean.ravel().tolist()),
        tuple(std.ravel().tolist()),
        parts,
    )


# -- CIFAR binary ----------------------------------------------------------------------
_CIFAR = {  # kind -> (label bytes before the pixels, label byte used, classes, class-names file)
    "cifar10": (1, 0, 10, "batches.meta.txt"),
    "cifar100": (2, 1, 100, "fine_label_names.txt"),
}
_PIXELS = 3 * 32 * 32


def _cifar_kind(path: Path) -> str:
    if re.fullmatch(r"data_batch_\d+\.bin|test_batch\.bin", path.name):
        return "cifar10"
    if path.name in ("train.bin", "test.bin"):
        return "cifar100"
    raise DatasetError(
        f"{path}: not a CIFAR binary file name (CIFAR-10: data_batch_1.bin ... "
        "test_batch.bin; CIFAR-100: train.bin, test.bin)"
    )


def _cifar_files(files: list[Path], kind: str, resolution: int, test: Path | None = None) -> ImageDataset:
    """The records of `files`, and of `test` (the archive's test file) as the held-out split."""
    label_bytes, label_at, n_classes, names_file = _CIFAR[kind]
    record = label_bytes + _PIXELS
    images, labels = [], []
    for f in [*files, *([test] if test else [])]:
        raw = _read_bytes(f)
        if not raw or len(raw) % record:
            raise DatasetError(
                f"{f}: {len(raw)} bytes is not a whole number of {record}-byte "
                f"{kind.upper().replace('CIFAR', 'CIFAR-')} records (truncated or not "
                "a CIFAR binary file)"
            )
        rows = np.frombuffer(raw, np.uint8).reshape(-1, record)
        lab = rows[:, label_at].astype(np.int64)
        if lab.max() >= n_classes:
            bad = int(np.argmax(lab >= n_classes))
            raise DatasetError(f"{f}: record {bad} has label {lab[bad]}, but {kind} has {n_classes} classes")
        images.append(rows[:, label_bytes:].reshape(-1, 3, 32, 32))
        labels.append(lab)
    names = _class_names(files[0].parent / names_file, n_classes)
    pixels = np.concatenate(images).astype(np.float32) / 255.0
    held_out = np.arange(len(pixels)) >= len(pixels) - (len(labels[-1]) if test else 0)
    return _finish(
        kind, files[0].parent, pixels, np.concatenate(labels), names, resolution, relabel=False, held_out=held_out
    )


def _class_names(path: Path, n_classes: int) -> tuple[str, ...]:
    """Names from the archive's text file when it is there and well-formed, else '0'..'n-1'."""
    try:
        names = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, UnicodeDecodeError):
        names = []
    return tuple(names) if len(names) == n_classes else tuple(map(str, range(n_classes)))


# -- .npz --------------------------------------------------------------------------------
ArrayHeader = tuple[tuple[int, ...], np.dtype]  # an .npy array's (shape, dtype)
#: (images, labels) and the optional test split's (images, labels), in each naming an archive may use
_NPZ_KEYS = ((("images", "labels"), ("test_images", "test_labels")), (("x_train", "y_train"), ("x_test", "y_test")))


def _npz(path: Path, resolution: int) -> ImageDataset:
    try:
        with np.load(path, allow_pickle=False) as archive:
            keys = _npz_pairs(path, archive.files)
            parts = [(names, archive[names[0]], archive[names[1]]) for names in keys]
    except DatasetError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise DatasetError(f"{path}: cannot read as a NumPy .npz archive ({e})") from None
    checked = [(_npz_images(path, names, images, labels), labels) for names, images, labels in parts]
    if len(checked) == 2 and checked[0][0].shape[1:] != checked[1][0].shape[1:]:
        raise DatasetError(
            f"{path}: {keys[1][0]} are {checked[1][0].shape[1:]} (C, H, W) but {keys[0][0]} are "
            f"{checked[0][0].shape[1:]}: a test split must look like the training images"
        )
    images = np.concatenate([i for i, _ in checked]).astype(np.float32)
    labels = np.concatenate([lab for _, lab in checked])
    held_out = np.arange(len(labels)) >= len(checked[0][1]) if len(checked) == 2 else None
    low, high = float(images.min()), float(images.max())
    if low < 0.0 or high > 1.0:  # e.g. 0..255: rescale to [0, 1]; split_dataset standardises later
        images = (images - low) / ((high - low) or 1.0)
    return _finish(path.stem, path, images, labels, None, resolution, held_out=held_out)


def _npz_pairs(path: Path, names: Collection[str]) -> tuple[tuple[str, str], ...]:
    """The (images, labels) names of the archive's arrays `names`: the training pair, then the
    test split's when the archive has one; DatasetError when either is incomplete."""
    keys = next((k for k in _NPZ_KEYS if all(n in names for n in k[0])), None)
    if keys is None:
        raise DatasetError(
            f"{path}: missing arrays; expected {' and '.join(_NPZ_KEYS[0][0])} "
            f"(or {' and '.join(_NPZ_KEYS[1][0])}), found {', '.join(names) or 'none'}"
        )
    test = [n in names for n in keys[1]]
    if any(test) and not all(test):
        have, lack = (keys[1][0], keys[1][1]) if test[0] else (keys[1][1], keys[1][0])
        raise DatasetError(f"{path}: {have} has no {lack} beside it (a test split needs both)")
    return keys if all(test) else keys[:1]


def _check_npz_arrays(path: Path, names: tuple[str, str], images: ArrayHeader, labels: ArrayHeader) -> None:
    """The archive's `names` = (images, labels) checked by their (shape, dtype) alone: numeric
    non-empty images of 3 or 4 dimensions, one whole-number label per image."""
    (shape, dtype), (label_shape, label_dtype) = images, labels
    where = f"{path}: {names[0]}"
    if dtype.kind not in "uif" or not np.prod(shape):
        raise DatasetError(f"{where} must be a non-empty numeric array, got dtype {dtype} and shape {shape}")
    if not (len(shape) == 3 or (len(shape) == 4 and (shape[-1] in (1, 3) or shape[1] in (1, 3)))):
        raise DatasetError(
            f"{where} has shape {shape}; expected [N, H, W], [N, H, W, C] or [N, C, H, W] with C = 1 or 3"
        )
    if len(label_shape) != 1 or label_dtype.kind not in "ui" or label_shape[0] != shape[0]:
        raise DatasetError(
            f"{path}: {names[1]} must be a 1-d integer array with one label per image "
            f"({shape[0]}), got dtype {label_dtype} and shape {label_shape}"
        )


def _npz_images(path: Path, names: tuple[str, str], images: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """The archive's `names` = (images, labels) checked; the images as [N, C, H, W]."""
    _check_npz_arrays(path, names, (images.shape, images.dtype), (labels.shape, labels.dtype))
    if images.ndim == 3:
        images = images[:, None]
    elif images.shape[-1] in (1, 3):
        images = images.transpose(0, 3, 1, 2)
    if not np.isfinite(images).all():
        raise DatasetError(f"{path}: {names[0]} contains NaN or infinite values")
    return images


# -- folders: CIFAR binary or an image tree -----------------------------------------------
def _folder(path: Path, resolution: int) -> ImageDataset:
    for candidate in (path, path / "cifar-10-batches-bin", path / "cifar-100-binary"):
        batches = sorted(candidate.glob("data_batch_*.bin"))
        if batches:
            return _cifar_files(batches, "cifar10", resolution, _if_file(candidate / "test_batch.bin"))
        if (candidate / "train.bin").is_file():
            return _cifar_files([candidate / "train.bin"], "cifar100", resolution, _if_file(candidate / "test.bin"))
    if (path / "train").is_dir() and (path / "test").is_dir():
        return _train_and_test_trees(path, resolution)
    return _image_tree(path, resolution)


def _if_file(path: Path) -> Path | None:
    return path if path.is_file() else None


def _image_tree(path: Path, resolution: int) -> ImageDataset:
    classes = _class_folders(path)
    files = _class_files(path, classes, classes)
    images, labels = _read_images(path, files, resolution)
    return _finish(path.name, path, images, labels, classes, resolution, relabel=False)


def _train_and_test_trees(path: Path, resolution: int) -> ImageDataset:
    """`train/` and `test/`, each one subfolder per class; the classes are train's, and test's
    images are the held-out split (a class may have none there)."""
    classes = _class_folders(path / "train")
    unknown = sorted(set(_class_folders(path / "test")) - set(classes))
    if unknown:
        raise DatasetError(
            f"{path / 'test'}: class folder(s) {', '.join(unknown)} have no counterpart in {path / 'train'}"
        )
    train = _class_files(path / "train", classes, classes)
    test = _class_files(path / "test", classes, _class_folders(path / "test"))
    images, labels = _read_images(path, train + test, resolution)
    held_out = np.arange(len(labels)) >= len(train)
    return _finish(path.name, path, images, labels, classes, resolution, relabel=False, held_out=held_out)


def _class_folders(path: Path) -> tuple[str, ...]:
    names = tuple(sorted(p.name for p in path.iterdir() if p.is_dir() and not p.name.startswith(".")))
    if not names:
        raise DatasetError(
            f"{path}: no CIFAR .bin files and no class subfolders; an image-folder "
            "dataset needs one subfolder of images per class"
        )
    return names


def _class_files(path: Path, classes: tuple[str, ...], present: tuple[str, ...]) -> list[tuple[Path, int]]:
    """The images of each folder in `present`, labelled by its place in `classes`."""
    files: list[tuple[Path, int]] = []
    for name in present:
        found = sorted(f for f in (path / name).iterdir() if f.suffix.lower() in IMAGE_SUFFIXES)
        if not found:
            raise DatasetError(f"{path / name}: class folder has no images ({', '.join(sorted(IMAGE_SUFFIXES))})")
        files += [(f, classes.index(name)) for f in found]
    return files


def _read_images(path: Path, files: list[tuple[Path, int]], resolution: int) -> tuple[np.ndarray, np.ndarray]:
    try:
        from PIL import Image, UnidentifiedImageError
    except ImportError:
        raise DatasetError(
            f"{path}: reading an image folder needs Pillow, which is not installed (pip install pillow)"
        ) from None
    images = np.empty((len(files), 3, resolution, resolution), np.float32)
    for i, (f, _) in enumerate(files):
        try:
            with Image.open(f) as img:
                rgb = img.convert("RGB").resize((resolution, resolution), Image.Resampling.BILINEAR)
        except (OSError, UnidentifiedImageError, ValueError) as e:
            raise DatasetError(f"{f}: cannot read as an image ({e})") from None
        images[i] = np.asarray(rgb, np.float32).transpose(2, 0, 1) / 255.0
    return images, np.array([label for _, label in files], np.int64)


# -- shared ---------------------------------------------------------------------------------
def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as e:
        raise DatasetError(f"{path}: cannot read ({e.strerror or e})") from None


def _finish(
    name: str,
    source: object,
    images: np.ndarray,
    labels: np.ndarray,
    classes: tuple[str, ...] | None,
    resolution: int,
    relabel: bool = True,
    held_out: np.ndarray | None = None,
) -> ImageDataset:
    """Labels -> 0..K-1 (named by their original values), gray -> 3 channels, resize to R x R.
    `source` (the file or folder) names the data in errors; `held_out` marks its own test split."""
    labels = np.asarray(labels)
    if relabel or classes is None:  # labels without class names are named by their values
        values, labels = np.unique(labels, return_inverse=True)
        classes = classes if classes is not None and len(classes) == len(values) else tuple(map(str, values))
    if len(classes) < 2:
        raise DatasetError(f"{source}: a classification dataset needs at least 2 classes, found {len(classes)}")
    if images.shape[1] == 1:
        images = np.repeat(images, 3, axis=1)
    if images.shape[-2:] != (resolution, resolution):
        images = _resize(images, resolution)
    return ImageDataset(name, np.ascontiguousarray(images, np.float32), labels.astype(np.int64), classes, held_out)


def _resize(images: np.ndarray, resolution: int) -> np.ndarray:
    """Bilinear resize of [N, C, H, W] to R x R, antialiased when shrinking (torch, imported here
    because only worker processes and the CLI load datasets)."""
    import torch
    import torch.nn.functional as F

    out = F.interpolate(
        torch.from_numpy(np.ascontiguousarray(images, np.float32)),
        size=(resolution, resolution),
        mode="bilinear",
        align_corners=False,
        antialias=images.shape[-1] > resolution,
    )
    return out.clamp_(0.0, 1.0).numpy()
