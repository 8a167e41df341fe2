"""Train the MNIST multi-layer perceptron with a hand-written loop instead of the Trainer.

The model is the one of ``train_mnist.py`` (784 - unit - unit - 10, in
``L.Classifier``, Adam). The loop draws mini-batches from a SerialIterator,
calls ``optimizer.update(model, x, t)`` under a progress bar (tqdm), and at
the end of each epoch prints the training loss and accuracy and evaluates the test set in test mode
(``using_config('train', False)``) without building a graph
(``no_backprop_mode()``). At the end the model and the optimizer are saved
with ``save_npz``, and the model is reloaded into a fresh network whose test
accuracy is printed: it equals the trained model's.

MNIST is read through dbr-datasets' ``get_mnist`` (downloaded, or read from
DBR_DATASET_ROOT / DBR_DATASET_MIRROR).

Install: ``pip install dbr-links dbr-datasets dbr-training``,
or ``pip install "dbr-chainer[all]"`` for all of dbr.
Run: ``python examples/mnist/train_mnist_custom_loop.py [--epoch 20] [--out result/mnist_loop]``.
"""

import argparse
import os
import pathlib
import sys

from tqdm import tqdm

import dbr.links as L
from dbr.core import memory, no_backprop_mode, using_config
from dbr.core.serializers import load_npz, save_npz
from dbr.datasets import SerialIterator, concat_examples

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from train_mnist import MLP, setup_model_and_data  # noqa: E402


def evaluate(model, test, batchsize, device):
    """Mean loss and accuracy of the Classifier ``model`` on ``test``, in test mode."""
    test_iter = SerialIterator(test, batchsize, repeat=False, shuffle=False)
    loss_sum = accuracy_sum = 0.0
    with using_config("train", False), no_backprop_mode():
        for batch in test_iter:
            x, t = concat_examples(batch, device)
            loss = model(x, t)
            loss_sum += float(loss.array) * len(t)
            accuracy_sum += float(model.accuracy.array) * len(t)
    return loss_sum / len(test), accuracy_sum / len(test)


def main(argv=None):
    """Train with the hand-written loop; return the test accuracy of the reloaded model."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batchsize", "-b", type=int, default=100, help="examples per update")
    parser.add_argument(
        "--epoch", "-e", type=int, default=20, help="number of sweeps over the data"
    )
    parser.add_argument("--device", "-d", default="@numpy", help="device specifier")
    parser.add_argument("--out", "-o", default="result/mnist_loop", help="output folder")
    parser.add_argument("--unit", "-u", type=int, default=1000, help="units per hidden layer")
    parser.add_argument("--seed", type=int, default=0, help="seed of numpy.random")
    parser.add_argument(
        "--test", action="store_true", help="use a small slice of MNIST (smoke test)"
    )
    args = parser.parse_args(argv)

    model, optimizer, train, test = setup_model_and_data(args)
    train_iter = SerialIterator(train, args.batchsize)
    # Each iteration frees arrays the next needs again: keep their memory, as a Trainer run does.
    memory.keep_freed_memory()

    loss_sum = accuracy_sum = 0.0
    seen = 0
    progress = tqdm(total=len(train), unit="images", desc="epoch 1", leave=False)
    while train_iter.epoch < args.epoch:
        x, t = concat_examples(train_iter.next(), args.device)
        optimizer.update(model, x, t)
        loss_sum += float(model.loss.array) * len(t)
        accuracy_sum += float(model.accuracy.array) * len(t)
        seen += len(t)
        progress.update(len(t))
        progress.set_postfix(loss=f"{loss_sum / seen:.4f}")
        if train_iter.is_new_epoch:
            progress.close()
            test_loss, test_accuracy = evaluate(model, test, args.batchsize, args.device)
            print(
                f"epoch {train_iter.epoch}: train loss {loss_sum / seen:.4f}, "
                f"accuracy {accuracy_sum / seen:.4f}; "
                f"test loss {test_loss:.4f}, accuracy {test_accuracy:.4f}"
            )
            loss_sum = accuracy_sum = 0.0
            seen = 0
            if train_iter.epoch < args.epoch:
                desc = f"epoch {train_iter.epoch + 1}"
                progress = tqdm(total=len(train), unit="images", desc=desc, leave=False)

    os.makedirs(args.out, exist_ok=True)
    model_file = os.path.join(args.out, "mlp.model")
    save_npz(model_file, model)
    save_npz(os.path.join(args.out, "mlp.state"), optimizer)
    print(f"saved the model to {model_file} and the optimizer to {args.out}/mlp.state")

    reloaded = L.Classifier(MLP(args.unit, 10))
    load_npz(model_file, reloaded)
    reloaded.to_device(args.device)
    loss, accuracy = evaluate(reloaded, test, args.batchsize, args.device)
    print(f"model reloaded from {model_file}: test loss {loss:.4f}, accuracy {accuracy:.4f}")
    return accuracy


if __name__ == "__main__":
    main()
