import os
import pickle
import sys
import zipfile

import numpy
import pytest

from dbr.core import mixed16, using_config
from dbr.datasets.image_dataset import (
    ImageDataset,
    LabeledImageDataset,
    LabeledZippedImageDataset,
    MultiZippedImageDataset,
    ZippedImageDataset,
)


@pytest.fixture
def Image():
    return pytest.importorskip("PIL.Image", reason="image datasets need Pillow (extra 'image')")


def rgb_pixels(seed, height=3, width=4):
    return numpy.random.RandomState(seed).randint(0, 256, (height, width, 3)).astype(numpy.uint8)


def grey_pixels(seed, height=2, width=5):
    return numpy.random.RandomState(seed).randint(0, 256, (height, width)).astype(numpy.uint8)


@pytest.fixture
def images(tmp_path, Image):
    """Three PNG files (two RGB, one greyscale) and their pixels in HWC / HW layout."""
    pixels = {"a.png": rgb_pixels(0), "sub/b.png": grey_pixels(1), "c.png": rgb_pixels(2)}
    (tmp_path / "sub").mkdir()
    for name, array in pixels.items():
        Image.fromarray(array).save(tmp_path / name)
    return tmp_path, pixels


def chw(array):
    return (array[:, :, None] if array.ndim == 2 else array).transpose(2, 0, 1)


class TestImageDataset:
    def test_reads_chw_float32(self, images):
        root, pixels = images
        dataset = ImageDataset(list(pixels), root=str(root))
        assert len(dataset) == 3
        for i, array in enumerate(pixels.values()):
            image = dataset[i]
            assert image.dtype == numpy.float32
            numpy.testing.assert_array_equal(image, chw(array))
        assert dataset[1].shape == (1, 2, 5)
        assert dataset[0].shape == (3, 3, 4)

    def test_dtype_argument_and_config_default(self, images):
        root, pixels = images
        assert ImageDataset(["a.png"], root=root, dtype=numpy.uint8)[0].dtype == numpy.uint8
        with using_config("dtype", numpy.float64):
            dataset = ImageDataset(["a.png"], root=root)
        assert dataset[0].dtype == numpy.float64
        with using_config("dtype", mixed16):
            dataset = ImageDataset(["a.png"], root=root)
        assert dataset[0].dtype == numpy.float16

    def test_paths_from_text_file(self, images, tmp_path):
        root, pixels = images
        listing = tmp_path / "list.txt"
        listing.write_text("a.png\n\n  sub/b.png  \nc.png\n")
        dataset = ImageDataset(str(listing), root=root)
        assert len(dataset) == 3
        numpy.testing.assert_array_equal(dataset[-2], chw(pixels["sub/b.png"]))

    def test_indexing(self, images):
        root, pixels = images
        dataset = ImageDataset(list(pixels), root=root)
        assert len(dataset[0:2]) == 2
        numpy.testing.assert_array_equal(dataset[-1], chw(pixels["c.png"]))
        with pytest.raises(IndexError):
            dataset[3]

    def test_empty(self, Image):
        assert len(ImageDataset([])) == 0

    def test_missing_file(self, tmp_path, Image):
        with pytest.raises(FileNotFoundError):
            ImageDataset(["nope.png"], root=tmp_path)[0]


class TestLabeledImageDataset:
    def test_pairs(self, images):
        root, pixels = images
        dataset = LabeledImageDataset([("a.png", 3), ("sub/b.png", 7)], root=root)
        image, label = dataset[1]
        numpy.testing.assert_array_equal(image, chw(pixels["sub/b.png"]))
        assert label.dtype == numpy.int32
        assert label.shape == ()
        assert int(label) == 7

    def test_pairs_file_and_label_dtype(self, images, tmp_path):
        root, pixels = images
        listing = tmp_path / "pairs.txt"
        listing.write_text("a.png 0\nc.png\t5\n\n")
        dataset = LabeledImageDataset(str(listing), root=root, label_dtype=numpy.int64)
        assert len(dataset) == 2
        image, label = dataset[-1]
        numpy.testing.assert_array_equal(image, chw(pixels["c.png"]))
        assert label.dtype == numpy.int64
        assert int(label) == 5

    def test_malformed_pairs_file(self, tmp_path, Image):
        listing = tmp_path / "pairs.txt"
        listing.write_text("a.png 0\nb.png\n")
        with pytest.raises(ValueError, match="line 2 of .*pairs.txt must hold a path and an"):
            LabeledImageDataset(str(listing))
        listing.write_text("a.png zero\n")
        with pytest.raises(ValueError, match="line 1 of .* integer label, got 'zero'"):
            LabeledImageDataset(str(listing))


def make_zip(path, pixels, names):
    from PIL import Image

    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("dir/", b"")
        for name in names:
            path_in = os.path.join(os.path.dirname(path), "tmp.png")
            Image.fromarray(pixels[name]).save(path_in)
            zf.write(path_in, name)
    return str(path)


class TestZippedImageDatasets:
    def test_zipped(self, images, tmp_path):
        _, pixels = images
        zip_path = make_zip(tmp_path / "x.zip", pixels, list(pixels))
        dataset = ZippedImageDataset(zip_path)
        assert len(dataset) == 3
        for i, array in enumerate(pixels.values()):
            numpy.testing.assert_array_equal(dataset[i], chw(array))
        numpy.testing.assert_array_equal(dataset["sub/b.png"], chw(pixels["sub/b.png"]))
        assert dataset[0].dtype == numpy.float32
        with pytest.raises(IndexError):
            dataset[-4]

    def test_zipped_pickles(self, images, tmp_path):
        _, pixels = images
        dataset = ZippedImageDataset(make_zip(tmp_path / "x.zip", pixels, list(pixels)))
        clone = pickle.loads(pickle.dumps(dataset))
        numpy.testing.assert_array_equal(clone[2], dataset[2])

    def test_multi_zipped(self, images, tmp_path):
        _, pixels = images
        names = list(pixels)
        first = make_zip(tmp_path / "1.zip", pixels, names[:2])
        empty = make_zip(tmp_path / "2.zip", pixels, [])
        last = make_zip(tmp_path / "3.zip", pixels, names[2:])
        dataset = MultiZippedImageDataset([first, empty, last], dtype=numpy.float64)
        assert len(dataset) == 3
        for i, name in enumerate(names):
            numpy.testing.assert_array_equal(dataset[i], chw(pixels[name]))
        assert dataset[-1].dtype == numpy.float64
        with pytest.raises(IndexError):
            dataset[3]
        with pytest.raises(IndexError, match="MultiZippedImageDataset: index -1"):
            dataset.get_example(-1)

    def test_labeled_zipped(self, images, tmp_path):
        _, pixels = images
        zip_path = make_zip(tmp_path / "x.zip", pixels, list(pixels))
        labels = tmp_path / "labels.txt"
        labels.write_text("c.png 2\nsub/b.png 1\n")
        dataset = LabeledZippedImageDataset(zip_path, str(labels))
        assert len(dataset) == 2
        image, label = dataset[0]
        numpy.testing.assert_array_equal(image, chw(pixels["c.png"]))
        assert label.dtype == numpy.int32
        assert int(label) == 2
        assert int(dataset[-1][1]) == 1


@pytest.mark.parametrize(
    "make",
    [
        lambda: ImageDataset([]),
        lambda: LabeledImageDataset([]),
        lambda: ZippedImageDataset("x.zip"),
    ],
)
def test_missing_pillow_names_the_extra(monkeypatch, make):
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(ImportError, match=r'needs Pillow; .*pip install "dbr-datasets\[image\]"'):
        make()


def test_available_says_whether_pillow_is_installed():
    import importlib.util

    from dbr.datasets import image_dataset

    assert image_dataset.available is (importlib.util.find_spec("PIL") is not None)
