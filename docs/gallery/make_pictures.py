"""Run each example briefly and keep its plots for the gallery (not part of the docs build).

Each run uses the example's own command line with few epochs or a slice of the
real data in ``../shared/datasets`` beside the checkout (or
``DBR_SHARED_DATASETS``), read through ``DBR_DATASET_MIRROR`` so that nothing
is downloaded. For each example this writes, under ``docs/gallery/_images/``,
the PNGs of its PlotReport (copied as the example wrote them) or, for an
example that only keeps a LogReport, the same kind of plot drawn from its
``log``; and under ``docs/gallery/_runs/`` an ``.rst`` snippet with the command
that ran, its wall time and the last log entry, which the gallery pages include.
The PNGs and snippets are committed; ``nox -s docs`` only reads them.

Run from the repository root, with the packages importable (their wheels
installed, or ``PYTHONPATH`` naming each ``packages/*/src``)::

    python docs/gallery/make_pictures.py            # every example (a quarter hour on 2 cores)
    python docs/gallery/make_pictures.py vae ptb    # some of them
"""

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GALLERY = Path(__file__).resolve().parent
IMAGES = GALLERY / "_images"
RUNS_DIR = GALLERY / "_runs"
SHARED = Path(os.environ.get("DBR_SHARED_DATASETS", ROOT.parent / "shared" / "datasets"))

# name -> (script, arguments, plots); a plot is (file name, log keys, x key).
# With "copy" the example's own PlotReport wrote the files; otherwise they are
# drawn from its log with the same keys and x axis a PlotReport would use.
RUNS = {
    "digits": (
        "examples/digits/train_digits_cnn.py",
        ["--epoch", "10"],
        "copy",
        [("loss.png", None, None), ("accuracy.png", None, None)],
    ),
    "mnist": (
        "examples/mnist/train_mnist.py",
        ["--epoch", "5", "--unit", "100"],
        "copy",
        [("loss.png", None, None), ("accuracy.png", None, None)],
    ),
    "lenet": (
        "examples/convnet/train_lenet.py",
        ["--test", "--epoch", "6"],
        "draw",
        [
            ("loss.png", ["main/loss", "validation/main/loss"], "epoch"),
            ("accuracy.png", ["main/accuracy", "validation/main/accuracy"], "epoch"),
        ],
    ),
    "vae": (
        "examples/vae/train_vae.py",
        ["--epoch", "5", "--train-size", "6000"],
        "draw",
        [("loss.png", ["main/loss", "validation/main/loss"], "epoch")],
    ),
    "dcgan": (
        "examples/dcgan/train_dcgan.py",
        ["--test", "--epoch", "30", "--ch", "16", "--snapshot-interval", "300"]
        + ["--display-interval", "10"],
        "draw",
        [("loss.png", ["gen/loss", "dis/loss"], "iteration")],
    ),
    "ptb": (
        "examples/ptb/train_ptb.py",
        ["--epoch", "3", "--unit", "64", "--train-words", "30000", "--dropout", "0.2"],
        "draw",
        [("perplexity.png", ["perplexity", "val_perplexity"], "iteration")],
    ),
    "char_rnn": (
        "examples/char_rnn/train_char_rnn.py",
        ["--epoch", "3", "--unit", "64", "--length", "200", "--text", "{shakespeare_head}"],
        "draw",
        [("perplexity.png", ["perplexity", "val_perplexity"], "iteration")],
    ),
    "seq2seq": (
        "examples/seq2seq/seq2seq.py",
        ["--epoch", "6", "--unit", "64", "--n-train", "3000", "--n-test", "100"],
        "draw",
        [("loss.png", ["main/loss", "validation/main/loss"], "epoch")],
    ),
    "word2vec": (
        "examples/word2vec/train_word2vec.py",
        ["--epoch", "20", "--unit", "50", "--test"],
        "draw",
        [("loss.png", ["main/loss", "validation/main/loss"], "epoch")],
    ),
}


def draw(log, keys, x_key, path):
    """A PlotReport-style plot of ``keys`` against ``x_key`` from LogReport entries."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=80)
    for key in keys:
        points = [(e[x_key], e[key]) for e in log if key in e]
        if points:
            xs, ys = zip(*points)
            ax.plot(xs, ys, marker="x", label=key)
    ax.set_xlabel(x_key)
    ax.legend(loc="best")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def snippet(name, command, seconds, log):
    """The reST the gallery page includes: the command, its wall time, the last log entry."""
    last = log[-1] if log else {}
    lines = [
        "Brief run behind the pictures (``docs/gallery/make_pictures.py``):",
        "",
        ".. code-block:: console",
        "",
        f"   $ {command}",
        "",
        f"It took {seconds:.0f} s on the 2-core CPU machine where the pictures were made;",
        "its last log entry:",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - key",
        "     - value",
    ]
    for key, value in last.items():
        if isinstance(value, float):
            value = f"{value:.4g}"
        lines += [f"   * - ``{key}``", f"     - {value}"]
    (RUNS_DIR / f"{name}.rst").write_text("\n".join(lines) + "\n")


def run(name, scratch):
    script, args, mode, plots = RUNS[name]
    out = scratch / name
    head = scratch / "tinyshakespeare_head.txt"
    if "{shakespeare_head}" in args and not head.exists():
        text = (SHARED / "tinyshakespeare" / "input.txt").read_text(encoding="utf-8")
        head.write_text(text[:60000], encoding="utf-8")
    args = [a.format(shakespeare_head=head) for a in args]
    env = dict(os.environ, MPLBACKEND="Agg")
    env["DBR_DATASET_MIRROR"] = SHARED.as_uri()
    env["DBR_DATASET_ROOT"] = str(scratch / "dataset-root")
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, script, *args, "--out", str(out)],
        cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    seconds = time.perf_counter() - start
    log = json.loads((out / "log").read_text())
    IMAGES.mkdir(exist_ok=True)
    RUNS_DIR.mkdir(exist_ok=True)
    for filename, keys, x_key in plots:
        target = IMAGES / f"{name}_{filename}"
        if mode == "copy":
            shutil.copyfile(out / filename, target)
        else:
            draw(log, keys, x_key, target)
    for extra in sorted((out / "preview").glob("*.png"))[-1:]:
        shutil.copyfile(extra, IMAGES / f"{name}_preview.png")
    if (out / "sampled.png").exists():
        shutil.copyfile(out / "sampled.png", IMAGES / f"{name}_sampled.png")
    shown = " ".join(shlex.quote(a) for a in args).replace(str(head), "head.txt")
    snippet(name, f"python {script} {shown}", seconds, log)
    print(f"{name}: {seconds:.0f} s", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help=f"examples (all by default): {', '.join(RUNS)}")
    names = parser.parse_args(argv).names or list(RUNS)
    unknown = [name for name in names if name not in RUNS]
    if unknown:
        parser.error(f"no example named {', '.join(unknown)}; choose from {', '.join(RUNS)}")
    with tempfile.TemporaryDirectory() as scratch:
        for name in names:
            run(name, Path(scratch))


if __name__ == "__main__":
    main()
