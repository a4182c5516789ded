"""The datasets that ship with Tessera, both made from scikit-learn's bundled handwritten
digits (1797 real 8x8 scans, 10 classes), so nothing is ever downloaded.

- "digits": the scans as they are.
- "digits-shifted" (the default proxy task, at 24 px): each scan at a seeded random place
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

import numpy as np

SCAN = 8  # the scans' side in pixels
CANVAS = 16  # digits-shifted's side in pixels
PLACEMENT_SEED = 20  # digits-shifted's offsets; changing it changes the dataset

#: images [N, 1, S, S] float32 in [0, 1], labels [N], class names
Bundle = tuple[np.ndarray, np.ndarray, tuple[str, ...]]


def digits() -> Bundle:
    """scikit-learn's 8x8 scans, 0..16 scaled to 0..1."""
    from sklearn.datasets import load_digits

    bunch = load_digits()
    images = (bunch.images / 16.0).astype(np.float32)[:, None]
    return images, bunch.target, tuple(map(str, bunch.target_names))


def shifted_digits() -> Bundle:
    """Each scan pasted at a seeded random offset (uniform over the places it fits) on a
    black CANVAS x CANVAS canvas."""
    scans, labels, classes = digits()
    room = CANVAS - SCAN + 1
    rows, cols = np.random.default_rng(PLACEMENT_SEED).integers(0, room, (2, len(scans)))
    images = np.zeros((len(scans), 1, CANVAS, CANVAS), np.float32)
    for i, (r, c) in enumerate(zip(rows, cols)):
        images[i, :, r : r + SCAN, c : c + SCAN] = scans[i]
    return images, labels, classes


BUNDLED: dict[str, Callable[[], Bundle]] = {"digits": digits, "digits-shifted": shifted_digits}
