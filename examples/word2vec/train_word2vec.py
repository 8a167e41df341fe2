"""Learn word embeddings on the Penn Treebank with skip-gram or continuous bag of words.

The model (Mikolov et al., 2013) reads the PTB word stream through a window:
``--model skipgram`` predicts the centre word from each context word,
``--model cbow`` predicts it from the mean of the context embeddings. The
output layer is negative sampling (``--out-type ns``, L.NegativeSampling,
negatives drawn by its WalkerAlias sampler from the unigram counts to the
power 0.75), hierarchical softmax (``hsm``, L.BinaryHierarchicalSoftmax over
the Huffman tree of the PTB word counts) or a plain softmax over the whole
vocabulary (``original``). The loss is reported per predicted word, so the
three output layers print comparable figures.

At the end the input embeddings are written to ``OUT/embeddings.npz`` (array
``W``, one row per word id) and the vocabulary to ``OUT/vocab.txt`` (line ``i``
is word ``i``); ``search.py`` finds the nearest words in them.

Install: ``pip install dbr-links dbr-datasets dbr-training``,
or ``pip install "dbr-chainer[all]"`` for all of dbr.
Run: ``python examples/word2vec/train_word2vec.py [--model cbow] [--out-type hsm]
[--epoch 3] [--out result/word2vec]``; PTB is read by dbr-datasets'
``get_ptb_words`` (set DBR_DATASET_ROOT / DBR_DATASET_MIRROR to avoid a download).
"""

import argparse
import collections
import os

import numpy

import dbr.functions as F
import dbr.links as L
from dbr.core import Chain, initializers, report
from dbr.datasets import Iterator, converter, get_ptb_words, get_ptb_words_vocabulary, to_device
from dbr.training import StandardUpdater, Trainer, extensions, optimizers


class _WordEmbedding(Chain):
    """The embedding of the vocabulary and the output layer ``loss_func`` both models train."""

    def __init__(self, n_vocab, n_units, loss_func):
        super().__init__()
        with self.init_scope():
            self.embed = L.EmbedID(n_vocab, n_units, initialW=initializers.Uniform(1.0 / n_units))
            self.loss_func = loss_func

    def _mean_loss(self, h, t):
        """``loss_func(h, t)`` per target word ``t``, reported as ``loss``."""
        loss = self.loss_func(h, t) * (1.0 / len(t))
        report({"loss": loss}, self)
        return loss


class ContinuousBoW(_WordEmbedding):
    """CBoW: the mean of the context embeddings predicts the centre word."""

    def forward(self, center, contexts):
        """Loss per centre word; ``center`` is ``(B,)``, ``contexts`` ``(B, 2w)`` int32 ids."""
        e = self.embed(contexts)
        h = F.sum(e, axis=1) * (1.0 / contexts.shape[1])
        return self._mean_loss(h, center)


class SkipGram(_WordEmbedding):
    """Skip-gram: every context word's embedding predicts the centre word on its own."""

    def forward(self, center, contexts):
        """Loss per (context, centre) pair; shapes as for :class:`ContinuousBoW`."""
        e = self.embed(contexts)
        batch_size, n_context, n_units = e.shape
        e = F.reshape(e, (batch_size * n_context, n_units))
        xp = self.embed.W.xp
        t = xp.broadcast_to(center[:, None], (batch_size, n_context)).reshape(-1)
        return self._mean_loss(e, t)


class SoftmaxCrossEntropyLoss(Chain):
    """The ``original`` output layer: an affine map to the vocabulary and a full softmax."""

    def __init__(self, n_in, n_out):
        super().__init__()
        with self.init_scope():
            self.out = L.Linear(n_in, n_out, initialW=0)

    def forward(self, x, t):
        """Summed softmax cross entropy of ``x`` ``(B, n_in)`` against ids ``t`` ``(B,)``."""
        return F.sum(F.softmax_cross_entropy(self.out(x), t, reduce="no"))


class WindowIterator(Iterator):
    """Batches of ``(centre ids, context ids)`` drawn from a word stream in random order.

    Each batch has one window half-width ``w`` drawn uniformly from
    ``[1, window - 1]`` (as Chainer's example), so contexts are ``(B, 2w)``.
    Positions closer than ``window`` to either end are never centres.
    """

    def __init__(self, dataset, window, batch_size, repeat=True):
        self.dataset = numpy.asarray(dataset, numpy.int32)
        self.window = window
        self.batch_size = batch_size
        self.repeat = repeat
        self.reset()

    def reset(self):
        """Rewind to the start of a fresh epoch with a new random order."""
        self.order = numpy.random.permutation(len(self.dataset) - self.window * 2).astype(
            numpy.int32
        )
        self.order += self.window
        self.current_position = 0
        self.epoch = 0
        self.is_new_epoch = False
        self._previous_epoch_detail = -1.0

    def __next__(self):
        if not self.repeat and self.epoch > 0:
            raise StopIteration
        self._previous_epoch_detail = self.epoch_detail
        i = self.current_position
        i_end = i + self.batch_size
        position = self.order[i:i_end]
        w = numpy.random.randint(self.window - 1) + 1
        offset = numpy.concatenate([numpy.arange(-w, 0), numpy.arange(1, w + 1)])
        contexts = self.dataset.take(position[:, None] + offset[None, :])
        center = self.dataset.take(position)
        if i_end >= len(self.order):
            numpy.random.shuffle(self.order)
            self.epoch += 1
            self.is_new_epoch = True
            self.current_position = 0
        else:
            self.is_new_epoch = False
            self.current_position = i_end
        return center, contexts

    @property
    def epoch_detail(self):
        """Epochs done, with the fraction of the current one."""
        return self.epoch + self.current_position / len(self.order)

    @property
    def previous_epoch_detail(self):
        """``epoch_detail`` before the last batch; None before the first one."""
        return None if self._previous_epoch_detail < 0 else self._previous_epoch_detail

    def serialize(self, serializer):
        """Save or load the position, the epoch and the order."""
        self.current_position = int(serializer("current_position", self.current_position))
        self.epoch = int(serializer("epoch", self.epoch))
        self.is_new_epoch = bool(serializer("is_new_epoch", self.is_new_epoch))
        self._previous_epoch_detail = float(
            serializer("previous_epoch_detail", self._previous_epoch_detail)
        )
        serializer("order", self.order)


@converter()
def convert(batch, device=None):
    """Send a WindowIterator batch ``(centre, contexts)`` to ``device``."""
    center, contexts = batch
    return to_device(device, center), to_device(device, contexts)


def make_loss_func(out_type, n_units, counts, n_vocab, negative_size):
    """The output layer named by ``out_type`` (``ns``, ``hsm`` or ``original``)."""
    if out_type == "hsm":
        tree = L.BinaryHierarchicalSoftmax.create_huffman_tree(counts)
        loss_func = L.BinaryHierarchicalSoftmax(n_units, tree)
        loss_func.W.array[...] = 0
        return loss_func
    if out_type == "ns":
        return L.NegativeSampling(n_units, [counts[w] for w in range(n_vocab)], negative_size)
    return SoftmaxCrossEntropyLoss(n_units, n_vocab)


def save_embeddings(out, W, vocab):
    """Write ``W`` to ``out/embeddings.npz`` and the words, by id, to ``out/vocab.txt``."""
    os.makedirs(out, exist_ok=True)
    numpy.savez(os.path.join(out, "embeddings.npz"), W=W)
    index2word = {wid: word for word, wid in vocab.items()}
    with open(os.path.join(out, "vocab.txt"), "w", encoding="utf-8") as f:
        for wid in range(len(W)):
            f.write(index2word.get(wid, f"<id{wid}>") + "\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="@numpy", help="device specifier, e.g. @numpy")
    parser.add_argument("--unit", type=int, default=100, help="embedding size")
    parser.add_argument("--window", type=int, default=5, help="largest window half-width + 1")
    parser.add_argument("--batchsize", type=int, default=1000, help="centre words per batch")
    parser.add_argument("--epoch", type=int, default=20, help="number of sweeps over the data")
    parser.add_argument("--model", choices=["skipgram", "cbow"], default="skipgram")
    parser.add_argument("--negative-size", type=int, default=5, help="negatives per word (ns)")
    parser.add_argument("--out-type", choices=["ns", "hsm", "original"], default="ns")
    parser.add_argument("--out", default="result/word2vec", help="output folder")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--test", action="store_true", help="train on the first 1,000 words only (smoke test)"
    )
    args = parser.parse_args(argv)

    numpy.random.seed(args.seed)
    train, val, _ = get_ptb_words()
    counts = collections.Counter(train.tolist())
    counts.update(val.tolist())
    n_vocab = int(max(train)) + 1
    if args.test:
        train, val = train[:1000], val[:300]
    vocab = get_ptb_words_vocabulary()
    print(f"vocabulary: {n_vocab} words; {len(train)} training, {len(val)} validation words")

    loss_func = make_loss_func(args.out_type, args.unit, counts, n_vocab, args.negative_size)
    model_class = SkipGram if args.model == "skipgram" else ContinuousBoW
    model = model_class(n_vocab, args.unit, loss_func)
    model.to_device(args.device)
    optimizer = optimizers.Adam().setup(model)

    train_iter = WindowIterator(train, args.window, args.batchsize)
    val_iter = WindowIterator(val, args.window, args.batchsize, repeat=False)
    updater = StandardUpdater(train_iter, optimizer, converter=convert, device=args.device)
    trainer = Trainer(updater, (args.epoch, "epoch"), out=args.out)
    trainer.extend(extensions.Evaluator(val_iter, model, converter=convert, device=args.device))
    log = extensions.LogReport()
    trainer.extend(log)
    trainer.extend(
        extensions.PrintReport(["epoch", "main/loss", "validation/main/loss", "elapsed_time"])
    )
    trainer.extend(extensions.ProgressBar(update_interval=10))
    trainer.run()

    save_embeddings(args.out, numpy.asarray(to_device("@numpy", model.embed.W.array)), vocab)
    print(f"embeddings written to {args.out}/embeddings.npz and {args.out}/vocab.txt")
    return float(log.log[-1]["validation/main/loss"])


if __name__ == "__main__":
    main()
