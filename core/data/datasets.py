"""Image classification datasets: the bundled handwritten digits, or the user's own files.

Nothing is downloaded and nothing is unpickled. A name in core.data.bundled.BUNDLED
picks a dataset made from scikit-learn's bundled 8x8 handwritten digits (1797 real
scans, 10 classes), upscaled and replicated to 3 channels; the default, "digits-shifted",
puts each scan at a seeded random place on a larger canvas. A path may name:

- CIFAR-10/100 in the official *binary* format: a folder with `data_batch_*.bin`
  (CIFAR-10) or `train.bin` (CIFAR-100), the folder above it, or one such file;
- a `.npz` archive with `images` and `labels` (or Keras's `x_train`, `y_train`),
  images as [N, H, W], [N, H, W, C] or [N, C, H, W] with C in 1 or 3;
- an image-folder tree, one subfolder per class (read with Pillow).

Every dataset comes out as float32 images [N, 3, R, R] in [0, 1] at the requested
resolution R and int64 labels 0..classes-1; split_dataset makes the seeded,
stratified train/validation split and standardises both with training statistics.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .bundled import BUNDLED
from .errors import DatasetError

DEFAULT_DATASET = "digits-shifted"
DEFAULT_RESOLUTION = 24  # the proxy task's input side: digits-shifted's 16 px canvas, each scan 12 px
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

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def num_classes(self) -> int:
        return len(self.classes)

    @property
    def resolution(self) -> int:
        return self.images.shape[-1]

    def subset(self, index: np.ndarray) -> ImageDataset:
        return ImageDataset(self.name, self.images[index], self.labels[index], self.classes)


@dataclass(frozen=True)
class Split:
    """Training and validation parts, standardised with the training part's per-channel statistics."""

    train: ImageDataset
    val: ImageDataset
    mean: tuple[float, ...]
    std: tuple[float, ...]


# -- entry points --------------------------------------------------------------------
def load_dataset(source: str = DEFAULT_DATASET, resolution: int = DEFAULT_RESOLUTION) -> ImageDataset:
    """A bundled dataset's name or a path (CIFAR binary folder/file, .npz, image folder) -> an ImageDataset."""
    if not isinstance(resolution, int) or isinstance(resolution, bool) or not 4 <= resolution <= 512:
        raise DatasetError(f"resolution must be an integer between 4 and 512 pixels, got {resolution!r}")
    if source in BUNDLED:
        images, labels, classes = BUNDLED[source]()
        return _finish(source, f"the bundled {source}", images, labels, classes, resolution)
    path = Path(check_source(source))
    if path.is_file():
        if path.suffix == ".npz":
            return _npz(path, resolution)
        if path.suffix == ".bin":
            return _cifar_files([path], _cifar_kind(path), resolution)
        raise DatasetError(
            f"{path}: unsupported file type {path.suffix or '(none)'!r}; expected a .npz archive or a CIFAR .bin file"
        )
    return _folder(path, resolution)


def check_source(source: str) -> str:
    """A bundled dataset's name, or the path of an existing file or folder (resolved);
    DatasetError otherwise, so a request can be refused before any job is queued."""
    if source in BUNDLED:
        return source
    path = Path(source).expanduser()
    if not path.exists():
        raise DatasetError(f"{path}: no such file or folder; a dataset is {SOURCES}")
    return str(path.resolve())


def split_dataset(dataset: ImageDataset, val_fraction: float = 0.2, seed: int = 0, limit: int | None = None) -> Split:
    """Stratified, seeded train/validation split (the same seed always gives the same split).

    `limit` first keeps a stratified sample of that many examples, for quick proxy runs."""
    from sklearn.model_selection import train_test_split

    if not 0 < val_fraction < 1:
        raise DatasetError(f"the validation fraction must be between 0 and 1, got {val_fraction!r}")
    index = np.arange(len(dataset))
    try:
        if limit is not None and limit < len(index):
            index, _ = train_test_split(index, train_size=limit, random_state=seed, stratify=dataset.labels)
        train, val = train_test_split(index, test_size=val_fraction, random_state=seed, stratify=dataset.labels[index])
    except ValueError as e:
        raise DatasetError(
            f"{dataset.name}: cannot split {len(index)} examples of "
            f"{dataset.num_classes} classes into train and validation ({e})"
        ) from None
    train_set, val_set = dataset.subset(np.sort(train)), dataset.subset(np.sort(val))
    mean = train_set.images.mean(axis=(0, 2, 3), keepdims=True)
    std = train_set.images.std(axis=(0, 2, 3), keepdims=True) + 1e-6

    def standardise(part: ImageDataset) -> ImageDataset:
        return ImageDataset(part.name, ((part.images - mean) / std).astype(np.float32), part.labels, part.classes)

    return Split(
        standardise(train_set), standardise(val_set), tuple(mean.ravel().tolist()), tuple(std.ravel().tolist())
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


def _cifar_files(files: list[Path], kind: str, resolution: int) -> ImageDataset:
    label_bytes, label_at, n_classes, names_file = _CIFAR[kind]
    record = label_bytes + _PIXELS
    images, labels = [], []
    for f in files:
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
    return _finish(kind, files[0].parent, pixels, np.concatenate(labels), names, resolution, relabel=False)


def _class_names(path: Path, n_classes: int) -> tuple[str, ...]:
    """Names from the archive's text file when it is there and well-formed, else '0'..'n-1'."""
    try:
        names = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, UnicodeDecodeError):
        names = []
    return tuple(names) if len(names) == n_classes else tuple(map(str, range(n_classes)))


# -- .npz --------------------------------------------------------------------------------
_NPZ_KEYS = (("images", "labels"), ("x_train", "y_train"))


def _npz(path: Path, resolution: int) -> ImageDataset:
    try:
        with np.load(path, allow_pickle=False) as archive:
            keys = next((k for k in _NPZ_KEYS if all(n in archive.files for n in k)), None)
            if keys is None:
                raise DatasetError(
                    f"{path}: missing arrays; expected {' and '.join(_NPZ_KEYS[0])} "
                    f"(or {' and '.join(_NPZ_KEYS[1])}), found "
                    f"{', '.join(archive.files) or 'none'}"
                )
            images, labels = archive[keys[0]], archive[keys[1]]
    except DatasetError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise DatasetError(f"{path}: cannot read as a NumPy .npz archive ({e})") from None
    where = f"{path}: {keys[0]}"
    if images.dtype.kind not in "uif" or images.size == 0:
        raise DatasetError(
            f"{where} must be a non-empty numeric array, got dtype {images.dtype} and shape {images.shape}"
        )
    if images.ndim == 3:
        images = images[:, None]
    elif images.ndim == 4 and images.shape[-1] in (1, 3):
        images = images.transpose(0, 3, 1, 2)
    elif not (images.ndim == 4 and images.shape[1] in (1, 3)):
        raise DatasetError(
            f"{where} has shape {images.shape}; expected [N, H, W], [N, H, W, C] or [N, C, H, W] with C = 1 or 3"
        )
    if labels.ndim != 1 or labels.dtype.kind not in "ui" or len(labels) != len(images):
        raise DatasetError(
            f"{path}: {keys[1]} must be a 1-d integer array with one label per image "
            f"({len(images)}), got dtype {labels.dtype} and shape {labels.shape}"
        )
    if not np.isfinite(images).all():
        raise DatasetError(f"{where} contains NaN or infinite values")
    images = images.astype(np.float32)
    low, high = float(images.min()), float(images.max())
    if low < 0.0 or high > 1.0:  # e.g. 0..255: rescale to [0, 1]; split_dataset standardises later
        images = (images - low) / ((high - low) or 1.0)
    return _finish(path.stem, path, images, labels, None, resolution)


# -- folders: CIFAR binary or an image tree -----------------------------------------------
def _folder(path: Path, resolution: int) -> ImageDataset:
    for candidate in (path, path / "cifar-10-batches-bin", path / "cifar-100-binary"):
        batches = sorted(candidate.glob("data_batch_*.bin"))
        if batches:
            return _cifar_files(batches, "cifar10", resolution)
        if (candidate / "train.bin").is_file():
            return _cifar_files([candidate / "train.bin"], "cifar100", resolution)
    return _image_tree(path, resolution)


def _image_tree(path: Path, resolution: int) -> ImageDataset:
    class_dirs = sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not class_dirs:
        raise DatasetError(
            f"{path}: no CIFAR .bin files and no class subfolders; an image-folder "
            "dataset needs one subfolder of images per class"
        )
    files: list[tuple[Path, int]] = []
    for label, d in enumerate(class_dirs):
        found = sorted(f for f in d.iterdir() if f.suffix.lower() in IMAGE_SUFFIXES)
        if not found:
            raise DatasetError(f"{d}: class folder has no images ({', '.join(sorted(IMAGE_SUFFIXES))})")
        files += [(f, label) for f in found]
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
    labels = np.array([label for _, label in files], np.int64)
    return _finish(path.name, path, images, labels, tuple(d.name for d in class_dirs), resolution, relabel=False)


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
) -> ImageDataset:
    """Labels -> 0..K-1 (named by their original values), gray -> 3 channels, resize to R x R.
    `source` (the file or folder) names the data in errors."""
    labels = np.asarray(labels)
    if relabel:
        values, labels = np.unique(labels, return_inverse=True)
        classes = classes if classes is not None and len(classes) == len(values) else tuple(map(str, values))
    if len(classes) < 2:
        raise DatasetError(f"{source}: a classification dataset needs at least 2 classes, found {len(classes)}")
    if images.shape[1] == 1:
        images = np.repeat(images, 3, axis=1)
    if images.shape[-2:] != (resolution, resolution):
        images = _resize(images, resolution)
    return ImageDataset(name, np.ascontiguousarray(images, np.float32), labels.astype(np.int64), classes)


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
