"""Train the main job's digits CNN briefly, export it to ONNX and classify with ONNX Runtime.

The network is ``CNN`` of ``examples/digits/train_digits_cnn.py``, trained for
a few epochs with Adam on scikit-learn's 8x8 digits. ``dbr.onnx.export`` then
records one forward in test mode (dropout disappears from the graph) and
writes ``model.onnx`` with a dynamic batch dimension; the test split is
classified by ONNX Runtime alone, in one batch, and both accuracies are
printed (they agree up to float rounding).

Install: ``pip install "dbr-onnx[runtime]" dbr-links "dbr-datasets[sklearn]" dbr-training``.
Run: ``python examples/onnx/export_and_run.py [--epoch 5] [--out result/onnx]``.
"""

import argparse
import importlib.util
import os
import pathlib

import numpy
import onnxruntime
from tqdm import tqdm

import dbr.functions as F
import dbr.onnx
from dbr.core import no_backprop_mode, using_config
from dbr.datasets import SerialIterator, concat_examples, get_digits
from dbr.training import optimizers


def load_cnn_class():
    """``CNN`` from the main job's script, so both train the same network."""
    path = pathlib.Path(__file__).resolve().parents[1] / "digits" / "train_digits_cnn.py"
    spec = importlib.util.spec_from_file_location("train_digits_cnn", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CNN


def train(model, dataset, epochs, batchsize=64):
    """A plain training loop: Adam on the softmax cross entropy, with a progress bar."""
    optimizer = optimizers.Adam().setup(model)
    iterator = SerialIterator(dataset, batchsize, shuffle=True)
    with tqdm(total=epochs * len(dataset), unit="images", desc="training") as progress:
        while iterator.epoch < epochs:
            x, t = concat_examples(iterator.next())
            loss = F.softmax_cross_entropy(model(x), t)
            model.cleargrads()
            loss.backward()
            optimizer.update()
            # The batch that ends an epoch is topped up from the next one: count up to the total.
            progress.update(min(len(t), progress.total - progress.n))
            epoch = min(iterator.epoch + 1, epochs)
            progress.set_postfix(epoch=epoch, loss=f"{float(loss.array):.3f}")


def main(argv=None):
    """Train, export, classify with ONNX Runtime; return (dbr accuracy, ONNX Runtime accuracy)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epoch", type=int, default=5, help="training epochs")
    parser.add_argument("--out", default="result/onnx", help="folder for model.onnx")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    numpy.random.seed(args.seed)

    train_set, test_set = get_digits(ndim=3)
    model = load_cnn_class()()
    train(model, train_set, args.epoch)
    x_test, t_test = concat_examples(test_set[:])
    with using_config("train", False), no_backprop_mode():
        dbr_accuracy = float((model(x_test).array.argmax(axis=1) == t_test).mean())

    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "model.onnx")
    dbr.onnx.export(
        model, x_test[:1], filename=path, input_names=["image"], output_names=["scores"],
        input_shapes=[("batch", *x_test.shape[1:])],
    )  # fmt: skip
    print(f"exported {path}")

    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    (scores,) = session.run(["scores"], {"image": x_test})
    onnx_accuracy = float((scores.argmax(axis=1) == t_test).mean())
    print(f"test accuracy with dbr:          {dbr_accuracy:.4f}")
    print(f"test accuracy with ONNX Runtime: {onnx_accuracy:.4f}")
    return dbr_accuracy, onnx_accuracy


if __name__ == "__main__":
    main()
