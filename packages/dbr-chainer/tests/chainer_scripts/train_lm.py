"""A Chainer v7 script: a tiny LSTM language model trained with truncated BPTT.

Written as Chainer's PTB example is: a word stream read as parallel streams
by a custom iterator, a custom updater that accumulates ``--bproplen`` steps
of loss, backpropagates and cuts the graph with ``unchain_backward``, and an
evaluation of perplexity. The "text" is a synthetic token stream that repeats
a fixed pattern, so a working model's perplexity falls well below the
vocabulary size; the script prints ``test perplexity: <float>``.
"""

import argparse

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np
from chainer import training
from chainer.training import extensions


class RNNForLM(chainer.Chain):
    def __init__(self, n_vocab, n_units):
        super().__init__()
        with self.init_scope():
            self.embed = L.EmbedID(n_vocab, n_units)
            self.l1 = L.LSTM(n_units, n_units)
            self.l2 = L.Linear(n_units, n_vocab)
        for param in self.params():
            param.array[...] = np.random.uniform(-0.1, 0.1, param.shape)

    def reset_state(self):
        self.l1.reset_state()

    def forward(self, x):
        h0 = self.embed(x)
        h1 = self.l1(F.dropout(h0))
        return self.l2(F.dropout(h1))


class ParallelSequentialIterator(chainer.dataset.Iterator):
    def __init__(self, dataset, batch_size, repeat=True):
        super().__init__()
        self.dataset = dataset
        self.batch_size = batch_size
        self.epoch = 0
        self.is_new_epoch = False
        self.repeat = repeat
        length = len(dataset)
        self.offsets = [i * length // batch_size for i in range(batch_size)]
        self.iteration = 0
        self._previous_epoch_detail = -1.0

    def __next__(self):
        length = len(self.dataset)
        if not self.repeat and self.iteration * self.batch_size >= length:
            raise StopIteration
        cur_words = self.get_words()
        self._previous_epoch_detail = self.epoch_detail
        self.iteration += 1
        next_words = self.get_words()
        epoch = self.iteration * self.batch_size // length
        self.is_new_epoch = self.epoch < epoch
        if self.is_new_epoch:
            self.epoch = epoch
        return list(zip(cur_words, next_words))

    next = __next__

    @property
    def epoch_detail(self):
        return self.iteration * self.batch_size / len(self.dataset)

    @property
    def previous_epoch_detail(self):
        if self._previous_epoch_detail < 0:
            return None
        return self._previous_epoch_detail

    def get_words(self):
        return [self.dataset[(offset + self.iteration) % len(self.dataset)]
                for offset in self.offsets]  # fmt: skip

    def serialize(self, serializer):
        self.iteration = serializer("iteration", self.iteration)
        self.epoch = serializer("epoch", self.epoch)


class BPTTUpdater(training.updaters.StandardUpdater):
    def __init__(self, train_iter, optimizer, bprop_len, device):
        super().__init__(train_iter, optimizer, device=device)
        self.bprop_len = bprop_len

    def update_core(self):
        loss = 0
        train_iter = self.get_iterator("main")
        optimizer = self.get_optimizer("main")
        for _ in range(self.bprop_len):
            batch = train_iter.__next__()
            x, t = self.converter(batch, self.device)
            loss += optimizer.target(x, t)
        optimizer.target.cleargrads()
        loss.backward()
        loss.unchain_backward()
        optimizer.update()


def compute_perplexity(result):
    result["perplexity"] = np.exp(result["main/loss"])
    if "validation/main/loss" in result:
        result["val_perplexity"] = np.exp(result["validation/main/loss"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batchsize", "-b", type=int, default=10)
    parser.add_argument("--bproplen", "-l", type=int, default=5)
    parser.add_argument("--epoch", "-e", type=int, default=4)
    parser.add_argument("--device", "-d", type=str, default="-1")
    parser.add_argument("--gradclip", "-c", type=float, default=5)
    parser.add_argument("--out", "-o", default="result")
    parser.add_argument("--unit", "-u", type=int, default=32)
    args = parser.parse_args()

    device = chainer.get_device(args.device)
    device.use()
    np.random.seed(0)

    n_vocab = 12
    pattern = np.array([0, 3, 5, 7, 1, 8, 2, 9, 4, 6, 11, 10], dtype=np.int32)
    train = np.tile(pattern, 60)
    val = np.tile(pattern, 5)
    test = np.tile(pattern, 5)
    print(f"#vocab = {n_vocab}")

    train_iter = ParallelSequentialIterator(train, args.batchsize)
    val_iter = ParallelSequentialIterator(val, 1, repeat=False)
    test_iter = ParallelSequentialIterator(test, 1, repeat=False)

    rnn = RNNForLM(n_vocab, args.unit)
    model = L.Classifier(rnn)
    model.compute_accuracy = False
    model.to_device(device)

    optimizer = chainer.optimizers.SGD(lr=1.0)
    optimizer.setup(model)
    optimizer.add_hook(chainer.optimizer_hooks.GradientClipping(args.gradclip))

    updater = BPTTUpdater(train_iter, optimizer, args.bproplen, device)
    trainer = training.Trainer(updater, (args.epoch, "epoch"), out=args.out)

    eval_model = model.copy()
    eval_rnn = eval_model.predictor
    trainer.extend(
        extensions.Evaluator(
            val_iter, eval_model, device=device,
            eval_hook=lambda _: eval_rnn.reset_state(),
        )
    )  # fmt: skip
    trainer.extend(extensions.LogReport(postprocess=compute_perplexity, trigger=(1, "epoch")))
    trainer.extend(
        extensions.PrintReport(["epoch", "iteration", "perplexity", "val_perplexity"]),
        trigger=(1, "epoch"),
    )
    trainer.run()

    eval_rnn.reset_state()
    evaluator = extensions.Evaluator(test_iter, eval_model, device=device)
    result = evaluator()
    print("test perplexity: {}".format(np.exp(float(result["main/loss"]))))


if __name__ == "__main__":
    main()
