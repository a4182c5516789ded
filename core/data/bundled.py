"""The datasets that ship with Tessera, so nothing is ever downloaded: a subset of
Fashion-MNIST kept in this package, and two made from scikit-learn's bundled handwritten
digits (1797 real 8x8 scans, 10 classes).

- "fashion-mnist" (the default proxy task, at 24 px): FASHION_FILE, a stratified subset of
  Fashion-MNIST (Zalando Research, MIT licence, LICENSE beside it; 28x28 grey photographs of 10
  kinds of clothing), with its own test split of 3,000 images (fashion_mnist/README.md says how
  it was drawn). Its test split is large enough for a verdict to say "equal": the paired
  differences of an operator equal to the original spread by about 0.3 points, against 1.3 on
  digits-shifted's 360 test images, while the 1x1 network stays below the margin
  (docs/accuracy.md, "A task that can say equal").

- "digits": the scans as they are.
- "digits-shifted" (the default proxy task before issue 47): each scan at a seeded random place
  on a 16x16 canvas. On the plain scans ResNet-18 w16 with every stride-1 convolution a
  1x1 (only its three stride-2 3x3s left) comes within a point of the original (0.981 vs
  0.984 at 16 px), so a task on them cannot tell an operator that sees no neighbouring
  pixel from a convolution. To find a digit anywhere on the canvas a network needs
  spatial context: there that network falls 14 points behind (0.800 vs 0.939, std 0.007
  over 3 seeds) while grouped convolution keeps the original's accuracy, for about twice
  the epoch time (docs/accuracy.md, "Is the proxy task hard enough?").

The canvas is the same on every machine and every call: offsets come from a fixed seed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

SCAN = 8  # the scans' side in pixels
CANVAS = 16  # digits-shifted's side in pixels
PLACEMENT_SEED = 20  # digits-shifted's offsets; changing it changes the dataset
FASHION_FILE = Path(__file__).with_name("fashion_mnist") / "fashion-mnist.npz"
FASHION_CLASSES = (
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
)

#: images [N, 1, S, S] float32 in [0, 1], labels [N], class names, and the dataset's own test
#: split (bool [N]) or None
Bundle = tuple[np.ndarray, np.ndarray, tuple[str, ...], np.ndarray | None]


def digits() -> Bundle:
    """scikit-learn's 8x8 scans, 0..16 scaled to 0..1."""
    from sklearn.datasets import load_digits

    bunch = load_digits()
    images = (bunch.images / 16.0).astype(np.float32)[:, None]
    return images, bunch.target, tuple(map(str, bunch.target_names)), None


def shifted_digits() -> Bundle:
    """Each scan pasted at a seeded random offset (uniform over the places it fits) on a
    black CANVAS x CANVAS canvas."""
    scans, labels, classes, _ = digits()
    room = CANVAS - SCAN + 1
    rows, cols = np.random.default_rng(PLACEMENT_SEED).integers(0, room, (2, len(scans)))
    images = np.zeros((len(scans), 1, CANVAS, CANVAS), np.float32)
    for i, (r, c) in enumerate(zip(rows, cols)):
        images[i, :, r : r + SCAN, c : c + SCAN] = scans[i]
    return images, labels, classes, None


def fashion_mnist() -> Bundle:
    """The bundled Fashion-MNIST subset: its training pool, then its test split (held out)."""
    with np.load(FASHION_FILE, allow_pickle=False) as archive:
        train, test = archive["x_train"], archive["x_test"]
        labels = np.concatenate([archive["y_train"], archive["y_test"]]).astype(np.int64)
    images = np.concatenate([train, test])[:, None].astype(np.float32) / 255.0
    return images, labels, FASHION_CLASSES, np.arange(len(labels)) >= len(train)


BUNDLED: dict[str, Callable[[], Bundle]] = {
    "fashion-mnist": fashion_mnist,
    "digits": digits,
    "digits-shifted": shifted_digits,
}
