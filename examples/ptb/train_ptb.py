"""Train a recurrent language model on the Penn Treebank with truncated backpropagation.

The model embeds each word, runs it through ``--layers`` stacked LSTMs of
``--unit`` units with dropout between them and predicts the next word with a
linear layer over the 10,000-word vocabulary. The training text is read as
``--batchsize`` parallel streams; the gradient of ``--bproplen`` steps of loss
is backpropagated, then the graph is cut (``unchain_backward``) so that the
LSTM state carries on without the history. The log reports the perplexity of
the training batches and of the validation text; at the end the test
perplexity is printed and the model is saved (with its vocabulary) for
``gentxt.py``.

Install: ``pip install dbr-links dbr-datasets dbr-training``,
or ``pip install "dbr-chainer[all]"`` for all of dbr.
Run: ``python examples/ptb/train_ptb.py [--epoch 39] [--unit 650] [--out result/ptb]``;
the PTB files are downloaded by dbr-datasets, or read from ``DBR_DATASET_MIRROR``.
Sample text afterwards with ``python examples/ptb/gentxt.py --model result/ptb/rnnlm.npz``.
"""

import argparse
import json
import pathlib

import numpy

import dbr.functions as F
import dbr.links as L
from dbr.core import Chain, ChainList
from dbr.core.serializers import load_npz, save_npz
from dbr.datasets import Iterator, get_ptb_words, get_ptb_words_vocabulary
from dbr.training import StandardUpdater, Trainer, extensions, optimizer_hooks, optimizers


class RNNLM(Chain):
    """Word embedding, ``n_layers`` stacked LSTMs and a linear layer back to the vocabulary.

    Every parameter starts uniform in [-0.1, 0.1], as in Zaremba et al. (2014).

    Args:
        n_vocab (int): the vocabulary size.
        n_units (int): the size of the embedding and of each LSTM.
        n_layers (int): the number of stacked LSTMs.
        dropout (float): the dropout ratio applied before each LSTM and the output layer.
    """

    def __init__(self, n_vocab, n_units, n_layers=2, dropout=0.5):
        super().__init__()
        self.dropout = dropout
        with self.init_scope():
            self.embed = L.EmbedID(n_vocab, n_units)
            self.rnn = ChainList(*[L.LSTM(n_units, n_units) for _ in range(n_layers)])
            self.out = L.Linear(n_units, n_vocab)
        for param in self.params():
            param.array[...] = numpy.random.uniform(-0.1, 0.1, param.shape)

    def reset_state(self):
        """Forget the state of every LSTM (start of a new text)."""
        for lstm in self.rnn:
            lstm.reset_state()

    def forward(self, x):
        """Scores of the next word, ``(B, n_vocab)``, for the word ids ``x`` of shape ``(B,)``."""
        h = self.embed(x)
        for lstm in self.rnn:
            h = lstm(F.dropout(h, self.dropout))
        return self.out(F.dropout(h, self.dropout))


class ParallelSequentialIterator(Iterator):
    """Iterate over a word stream as ``batch_size`` streams that start evenly spaced.

    Each batch is a list of ``(word, next word)`` pairs, one per stream; stream
    ``i`` starts at offset ``i * len(dataset) // batch_size`` and wraps around.
    An epoch is ``len(dataset)`` words, ``len(dataset) / batch_size`` batches.

    Args:
        dataset (numpy.ndarray): the word ids, 1-d.
        batch_size (int): the number of parallel streams.
        repeat (bool): go on after one epoch; when False, ``next`` raises
            StopIteration once the streams have covered the text.
    """

    def __init__(self, dataset, batch_size, repeat=True):
        self.dataset = dataset
        self.batch_size = batch_size
        self.repeat = repeat
        self.offsets = numpy.arange(batch_size) * len(dataset) // batch_size
        self.reset()

    def reset(self):
        """Go back to the start of the streams (the Evaluator calls it before each sweep)."""
        self.epoch = 0
        self.iteration = 0
        self.is_new_epoch = False
        self._previous_epoch_detail = -1.0

    def __next__(self):
        """Return the next batch of ``(word, next word)`` pairs."""
        length = len(self.dataset)
        if not self.repeat and self.iteration * self.batch_size >= length:
            raise StopIteration
        current = self._words()
        self._previous_epoch_detail = self.epoch_detail
        self.iteration += 1
        following = self._words()
        epoch = self.iteration * self.batch_size // length
        self.is_new_epoch = self.epoch < epoch
        self.epoch = epoch
        return list(zip(current, following))

    next = __next__

    def _words(self):
        return self.dataset[(self.offsets + self.iteration) % len(self.dataset)]

    @property
    def epoch_detail(self):
        """Epochs done, with the fraction of the current one."""
        return self.iteration * self.batch_size / len(self.dataset)

    @property
    def previous_epoch_detail(self):
        """``epoch_detail`` before the last batch (None before the first)."""
        return None if self._previous_epoch_detail < 0 else self._previous_epoch_detail

    def serialize(self, serializer):
        """Save or load the position in the streams."""
        self.iteration = int(serializer("iteration", self.iteration))
        self.epoch = int(serializer("epoch", self.epoch))
        self.is_new_epoch = bool(serializer("is_new_epoch", self.is_new_epoch))
        self._previous_epoch_detail = float(
            serializer("previous_epoch_detail", self._previous_epoch_detail)
        )


class BPTTUpdater(StandardUpdater):
    """Truncated backpropagation through time: one update per ``bprop_len`` batches.

    The losses of ``bprop_len`` consecutive batches are summed, backpropagated
    together, and the graph behind them is cut so that the next update starts
    from the LSTM state without its history.
    """

    def __init__(self, train_iter, optimizer, bprop_len, device=None):
        super().__init__(train_iter, optimizer, device=device)
        self.bprop_len = bprop_len
        self._epoch_before_update = train_iter.epoch

    @property
    def is_new_epoch(self):
        """Whether the last update completed an epoch (with any of its batches)."""
        return self.epoch > self._epoch_before_update

    def update_core(self):
        """Accumulate ``bprop_len`` steps of loss, backpropagate, cut the graph, update."""
        train_iter = self.get_iterator("main")
        optimizer = self.get_optimizer("main")
        self._epoch_before_update = train_iter.epoch
        loss = 0
        for _ in range(self.bprop_len):
            x, t = self.converter(next(train_iter), self.input_device)
            loss += optimizer.target(x, t)
        optimizer.target.cleargrads()
        loss.backward()
        loss.unchain_backward()
        optimizer.update()


def compute_perplexity(result):
    """LogReport postprocess: add ``perplexity`` and ``val_perplexity`` from the mean losses."""
    result["perplexity"] = numpy.exp(result["main/loss"])
    if "validation/main/loss" in result:
        result["val_perplexity"] = numpy.exp(result["validation/main/loss"])


def every_interval_and_epoch_end(interval):
    """A trigger firing every ``interval`` updates and at each update that ends an epoch.

    Registered after the Evaluator, the log line of an epoch's last update
    carries the validation perplexity measured at that epoch's end.
    """

    def fire(trainer):
        updater = trainer.updater
        return updater.iteration % interval == 0 or updater.is_new_epoch

    return fire


def perplexity(model, words, batchsize, device):
    """Perplexity of the classifier ``model`` (its predictor an RNNLM) on a word stream."""
    model.predictor.reset_state()
    evaluator = extensions.Evaluator(
        ParallelSequentialIterator(words, batchsize, repeat=False), model, device=device
    )
    return float(numpy.exp(evaluator()["main/loss"]))


def build_parser(description):
    """The command line of this example."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--batchsize", "-b", type=int, default=20, help="parallel streams")
    parser.add_argument("--bproplen", "-l", type=int, default=35, help="steps of truncated BPTT")
    parser.add_argument("--epoch", "-e", type=int, default=39, help="sweeps over the train text")
    parser.add_argument("--unit", "-u", type=int, default=650, help="units per LSTM layer")
    parser.add_argument("--layers", type=int, default=2, help="number of stacked LSTMs")
    parser.add_argument("--dropout", type=float, default=0.5, help="dropout ratio")
    parser.add_argument("--lr", type=float, default=1.0, help="SGD learning rate")
    parser.add_argument("--gradclip", "-c", type=float, default=5.0, help="gradient norm bound")
    parser.add_argument(
        "--eval-batchsize",
        type=int,
        default=20,
        help="parallel streams when evaluating (1 reads the text strictly in order)",
    )
    parser.add_argument(
        "--train-words",
        type=int,
        default=None,
        help="use only the first N words of the training text (default: all of it)",
    )
    parser.add_argument("--device", "-d", default="@numpy", help="device specifier")
    parser.add_argument("--out", "-o", default="result/ptb", help="output folder")
    parser.add_argument("--resume", "-r", default=None, help="trainer snapshot to resume from")
    parser.add_argument("--model", "-m", default="rnnlm.npz", help="file name of the model")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--test", action="store_true", help="smoke test: 100 words of each text, a tiny model"
    )
    return parser


def build_trainer(model, optimizer, train, val, args, eval_batchsize, log_interval):
    """The truncated-BPTT trainer of a language model ``model`` over token ids ``train``.

    Gradients are clipped to ``args.gradclip``; ``val`` is evaluated (on a copy of
    the model with its own LSTM state) and the perplexities are logged, printed
    every ``log_interval`` iterations and at each epoch's end. Returns the
    trainer, the evaluated copy and the LogReport.
    """
    optimizer.add_hook(optimizer_hooks.GradientClipping(args.gradclip))
    train_iter = ParallelSequentialIterator(train, args.batchsize)
    val_iter = ParallelSequentialIterator(val, eval_batchsize, repeat=False)
    updater = BPTTUpdater(train_iter, optimizer, args.bproplen, device=args.device)
    trainer = Trainer(updater, (args.epoch, "epoch"), out=args.out)

    # The evaluated copy shares the parameters but has its own LSTM state.
    eval_model = model.copy()
    trainer.extend(
        extensions.Evaluator(
            val_iter,
            eval_model,
            device=args.device,
            eval_hook=lambda _: eval_model.predictor.reset_state(),
        )
    )
    log_trigger = every_interval_and_epoch_end(log_interval)
    log = extensions.LogReport(postprocess=compute_perplexity, trigger=log_trigger)
    trainer.extend(log)
    trainer.extend(
        extensions.PrintReport(
            ["epoch", "iteration", "perplexity", "val_perplexity", "elapsed_time"]
        ),
        trigger=log_trigger,
    )
    trainer.extend(extensions.ProgressBar(update_interval=1 if args.test else 10))
    return trainer, eval_model, log


def main(argv=None):
    """Train, report the perplexities and save the model; returns the test perplexity."""
    args = build_parser(__doc__.splitlines()[0]).parse_args(argv)
    numpy.random.seed(args.seed)

    train, val, test = get_ptb_words()
    vocabulary = get_ptb_words_vocabulary()
    n_vocab = len(vocabulary)
    if args.train_words is not None:
        train = train[: args.train_words]
    if args.test:
        train, val, test = train[:100], val[:100], test[:100]
        args.unit = min(args.unit, 16)
    print(f"# training words: {len(train)}, vocabulary: {n_vocab}")

    model = L.Classifier(RNNLM(n_vocab, args.unit, args.layers, args.dropout))
    model.compute_accuracy = False
    model.to_device(args.device)
    optimizer = optimizers.SGD(lr=args.lr).setup(model)
    trainer, eval_model, _ = build_trainer(
        model, optimizer, train, val, args, args.eval_batchsize, 1 if args.test else 100
    )
    trainer.extend(extensions.snapshot())
    if args.resume is not None:
        load_npz(args.resume, trainer)
    trainer.run()

    test_perplexity = perplexity(eval_model, test, args.eval_batchsize, args.device)
    print(f"test perplexity: {test_perplexity:.2f}")

    out = pathlib.Path(args.out)
    save_npz(out / args.model, model.predictor)
    (out / "vocab.json").write_text(json.dumps(sorted(vocabulary, key=vocabulary.get)))
    print(f"model saved to {out / args.model}, vocabulary to {out / 'vocab.json'}")
    return test_perplexity


if __name__ == "__main__":
    main()
