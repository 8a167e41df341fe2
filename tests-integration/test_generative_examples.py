"""The generative examples on real MNIST: DCGAN and VAE, and the PNG helper they share.

The PNG files are checked by parsing them here, independently of
``examples/_png.py``: the signature, every chunk's CRC, the IHDR size and
colour type, and the zlib stream decompressing to one filter byte plus one
row of pixels per scanline.
"""

import json
import math
import pathlib
import struct
import time
import zlib

import numpy
import pytest
from conftest import load_example

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def read_png(path):
    """Parse an 8-bit, non-interlaced grey or RGB PNG with filter-0 scanlines into an array."""
    data = pathlib.Path(path).read_bytes()
    assert data[:8] == PNG_SIGNATURE
    chunks, offset = [], 8
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        body = data[offset + 8 : offset + 8 + length]
        (crc,) = struct.unpack(">I", data[offset + 8 + length : offset + 12 + length])
        assert crc == zlib.crc32(kind + body), f"bad CRC in the {kind!r} chunk of {path}"
        chunks.append((kind, body))
        offset += 12 + length
    assert offset == len(data)
    assert chunks[0][0] == b"IHDR" and chunks[-1] == (b"IEND", b"")
    width, height, depth, colour, compression, filtering, interlace = struct.unpack(
        ">IIBBBBB", chunks[0][1]
    )
    assert (depth, compression, filtering, interlace) == (8, 0, 0, 0)
    channels = {0: 1, 2: 3}[colour]
    raw = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    assert len(raw) == height * (1 + width * channels)
    rows = numpy.frombuffer(raw, dtype=numpy.uint8).reshape(height, 1 + width * channels)
    assert (rows[:, 0] == 0).all(), "the writer uses filter type 0 on every scanline"
    pixels = rows[:, 1:].reshape(height, width, channels)
    return pixels[:, :, 0] if channels == 1 else pixels


def test_png_helper_round_trips_grey_and_rgb_and_tiles_a_grid(tmp_path):
    png = load_example("_png.py")
    grey = numpy.arange(15, dtype=numpy.uint8).reshape(3, 5) * 17
    rgb = numpy.random.RandomState(0).randint(0, 256, (4, 2, 3)).astype(numpy.uint8)
    for name, image in (("grey.png", grey), ("rgb.png", rgb)):
        path = png.write_png(str(tmp_path / name), image)
        back = read_png(path)
        assert back.shape == image.shape and back.tobytes() == image.tobytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grey.png", "rgb.png"]

    images = numpy.stack([numpy.full((2, 3), v, numpy.float32) for v in (0.0, 0.5, 1.0)])
    grid = png.tile_images(images, rows=2, cols=2, padding=1, background=7)
    assert grid.shape == (1 + 2 * 3, 1 + 2 * 4) and grid.dtype == numpy.uint8
    assert (grid[1:3, 1:4] == 0).all() and (grid[1:3, 5:8] == 128).all()
    assert (grid[4:6, 1:4] == 255).all() and (grid[4:6, 5:8] == 7).all()
    assert (grid[0] == 7).all() and (grid[:, 4] == 7).all()
    with pytest.raises(TypeError):
        png.encode_png(grey.astype(numpy.float32))


def test_dcgan_smoke_trains_writes_previews_and_resumes(mnist, tmp_path, capfd):
    example = load_example("dcgan/train_dcgan.py")
    losses = example.main(["--test", "--out", str(tmp_path)])
    assert set(losses) == {"gen/loss", "dis/loss"}
    assert all(math.isfinite(v) and v > 0 for v in losses.values())
    for name in ("snapshot_iter_10", "gen_iter_10", "dis_iter_10", "log"):
        assert (tmp_path / name).is_file()
    previews = sorted((tmp_path / "preview").iterdir())
    assert [p.name for p in previews] == ["image_iter_0000005.png", "image_iter_0000010.png"]
    for path in previews:
        assert read_png(path).shape == (1 + 10 * 29, 1 + 10 * 29)  # 10x10 digits, 1px borders
    assert "gen/loss" in capfd.readouterr().out

    snapshot = str(tmp_path / "snapshot_iter_5")
    losses = example.main(["--test", "--epoch", "2", "--out", str(tmp_path), "--resume", snapshot])
    assert all(math.isfinite(v) for v in losses.values())
    log = json.loads((tmp_path / "log").read_text())
    assert log[-1]["iteration"] == 20 and log[-1]["epoch"] == 2
    assert (tmp_path / "preview" / "image_iter_0000020.png").is_file()


def test_vae_smoke_trains_and_writes_reconstructions_and_samples(mnist, tmp_path, capfd):
    example = load_example("vae/train_vae.py")
    result = example.main(["--test", "--out", str(tmp_path)])
    assert all(math.isfinite(v) and v > 0 for v in result.values())
    assert read_png(tmp_path / "reconstructed_train.png").shape == (1 + 2 * 29, 1 + 10 * 29)
    assert read_png(tmp_path / "reconstructed_test.png").shape == (1 + 2 * 29, 1 + 10 * 29)
    assert read_png(tmp_path / "sampled.png").shape == (1 + 10 * 29, 1 + 10 * 29)
    log = json.loads((tmp_path / "log").read_text())
    assert math.isfinite(log[-1]["validation/main/loss"])
    assert "validation/main/loss" in capfd.readouterr().out


def test_vae_learns_on_real_mnist(mnist, tmp_path, report_figure):
    """One epoch over 10,000 training digits, evaluated on the 10,000 test digits.

    The loss is the negative ELBO, an upper bound on the negative
    log-likelihood in nats. Two criteria: it falls well below its value at
    initialisation, and below the likelihood of the best model that ignores
    the image (independent pixels with the training set's mean intensities,
    about 206 nats), which only a model using its latent code can beat.
    """
    train, test = mnist
    train_x = numpy.stack([x for x, _ in train[:10000]])
    test_x = numpy.stack([x for x, _ in test[:10000]])
    p = numpy.clip(train_x.mean(axis=0), 1e-6, 1 - 1e-6)
    baseline = float(-(test_x * numpy.log(p) + (1 - test_x) * numpy.log1p(-p)).sum(axis=1).mean())

    example = load_example("vae/train_vae.py")
    start = time.perf_counter()
    result = example.main(["--epoch", "1", "--train-size", "10000", "--out", str(tmp_path)])
    seconds = time.perf_counter() - start
    report_figure("VAE test loss at initialisation (nats)", result["initial_test_loss"])
    report_figure("VAE test loss after 1 epoch on 10k digits (nats)", result["test_loss"])
    report_figure("mean-image baseline NLL on the test set (nats)", baseline)
    report_figure("VAE 1 epoch on 10k digits, seconds", seconds)
    assert result["test_loss"] < 0.5 * result["initial_test_loss"]
    assert result["test_loss"] < baseline
