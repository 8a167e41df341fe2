"""Train the MNIST MLP on several processes with dbr.distributed (ChainerMN's train_mnist).

Rank 0 reads MNIST and scatters it, so every process trains on its own
share; the multi-node optimizer averages the gradients over the processes
before each Adam update (global batch = ``--batchsize`` x processes), and
the multi-node evaluator reports the test accuracy over every process's
share of the test set. Only rank 0 logs and prints. The model is the MLP of
``train_mnist.py``, imported from it.

Install: ``pip install dbr-links dbr-datasets dbr-training "dbr-distributed[mpich]"``
(on a cluster, its own MPI instead of ``[mpich]``).
Run: ``mpiexec -n 2 python examples/mnist/train_mnist_multi_node.py [--epoch 20] [--test]``.
"""

import argparse
import pathlib
import sys

import numpy

import dbr.distributed
import dbr.links as L
from dbr.datasets import SerialIterator, get_mnist
from dbr.training import StandardUpdater, Trainer, extensions, optimizers

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from train_mnist import MLP  # noqa: E402


def main(argv=None):
    """Train on every rank; return the last validation accuracy (the same on every rank)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batchsize", "-b", type=int, default=100, help="examples per process")
    parser.add_argument("--epoch", "-e", type=int, default=20, help="sweeps over the data")
    parser.add_argument("--communicator", default="naive", help="naive, flat or pure_nccl")
    parser.add_argument("--out", "-o", default="result/mnist_multi_node", help="output folder")
    parser.add_argument("--unit", "-u", type=int, default=1000, help="units per hidden layer")
    parser.add_argument("--test", action="store_true", help="a small slice of MNIST (smoke test)")
    args = parser.parse_args(argv)

    comm = dbr.distributed.create_communicator(args.communicator)
    if comm.rank == 0:
        print(f"# processes: {comm.size}, communicator: {args.communicator}")
        print(
            f"# minibatch-size: {args.batchsize} per process, {args.batchsize * comm.size} in all"
        )

    numpy.random.seed(comm.rank)
    model = L.Classifier(MLP(args.unit, 10))
    optimizer = dbr.distributed.create_multi_node_optimizer(optimizers.Adam(), comm)
    optimizer.setup(model)

    train = test = None
    if comm.rank == 0:
        train, test = get_mnist()
        if args.test:
            train, test = train[:600], test[:200]
    train = dbr.distributed.scatter_dataset(train, comm, shuffle=True, seed=0)
    test = dbr.distributed.scatter_dataset(test, comm)
    train_iter = SerialIterator(train, args.batchsize)
    test_iter = SerialIterator(test, args.batchsize, repeat=False, shuffle=False)

    updater = StandardUpdater(train_iter, optimizer)
    trainer = Trainer(updater, (args.epoch, "epoch"), out=args.out)
    evaluator = extensions.Evaluator(test_iter, model)
    trainer.extend(dbr.distributed.create_multi_node_evaluator(evaluator, comm))
    log_report = extensions.LogReport()
    trainer.extend(log_report)
    if comm.rank == 0:
        trainer.extend(
            extensions.PrintReport(
                ["epoch", "main/loss", "validation/main/loss", "validation/main/accuracy"]
            )
        )
    trainer.run()

    accuracy = float(log_report.log[-1]["validation/main/accuracy"])
    if comm.rank == 0:
        print(f"test accuracy: {accuracy:.4f}")
    return accuracy


if __name__ == "__main__":
    main()
