"""dbr.distributed: the gradient exchange against raw MPI, and MNIST throughput on 1 and 2 ranks.

``python benchmarks/distributed.py`` starts the parts under ``mpiexec`` and prints:

(a) ``multi_node_mean_grad`` of a ResNet-50-sized set of parameters (161
    float32 arrays, 25.6 M values) on 2 ranks, against one raw mpi4py
    ``Allreduce`` of one packed buffer of the same size, timed in turns
    ``--repeat`` times each: the ratio of the medians (of the bests) (target:
    at most 1.2x); ``mpiexec -n 2 python benchmarks/distributed.py --part
    mean_grad`` runs this part alone;
(b) one epoch of the MNIST MLP (784-1000-1000-10, batch 100 per rank,
    multi-node MomentumSGD) at 1 and 2 ranks with one BLAS thread each, in
    images per second (target: 2 ranks at least 1.6x of 1 rank).

MNIST is read with dbr-datasets through ``DBR_DATASET_MIRROR`` pointing at
``../shared/datasets`` beside the checkout (or ``DBR_SHARED_DATASETS``) unless
it is set already. The
machine's load average is printed before and after, since other work
sharing its cores slows the 2-rank run first.
"""

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve()
SHARED_DATASETS = pathlib.Path(
    os.environ.get("DBR_SHARED_DATASETS", HERE.parents[2] / "shared" / "datasets")
)
RESNET50_VALUES = 25_557_032
RESNET50_ARRAYS = 161


def _resnet50_sizes():
    """161 array sizes summing to ResNet-50's 25,557,032 values: a few large, many small."""
    weights = np.geomspace(1.0, 4000.0, RESNET50_ARRAYS)
    sizes = np.maximum((weights / weights.sum() * RESNET50_VALUES).astype(np.int64), 64)
    sizes[-1] += RESNET50_VALUES - sizes.sum()
    return [int(s) for s in sizes]


def part_mean_grad(repeat):
    from mpi4py import MPI

    import dbr.distributed as dist
    from dbr.core import Chain, Parameter

    comm = dist.create_communicator("flat")
    model = Chain()
    with model.init_scope():
        for i, size in enumerate(_resnet50_sizes()):
            setattr(model, f"p{i:03d}", Parameter(np.zeros(size, np.float32)))
    rng = np.random.RandomState(comm.rank)
    for p in model.params():
        p.grad = rng.rand(p.size).astype(np.float32)
    packed = np.ones(RESNET50_VALUES, np.float32)
    out = np.empty_like(packed)
    candidates = {
        "raw": lambda: MPI.COMM_WORLD.Allreduce(packed, out),
        "ours": lambda: comm.multi_node_mean_grad(model),
    }
    times = {name: [] for name in candidates}
    for fn in candidates.values():
        fn()
    # Interleaved, so that load from other work on the machine hits both alike.
    for _ in range(repeat):
        for name, fn in candidates.items():
            MPI.COMM_WORLD.Barrier()
            start = time.perf_counter()
            fn()
            MPI.COMM_WORLD.Barrier()
            times[name].append((time.perf_counter() - start) * 1e3)
    if comm.rank == 0:
        n = sum(p.size for p in model.params())
        ours, raw = (np.median(times[k]) for k in ("ours", "raw"))
        best_ours, best_raw = (min(times[k]) for k in ("ours", "raw"))
        print(
            f"(a) {comm.size} ranks, {len(list(model.params()))} arrays, {n / 1e6:.1f} M float32, "
            f"median (best) of {repeat}: multi_node_mean_grad {ours:.1f} ({best_ours:.1f}) ms, "
            f"raw Allreduce {raw:.1f} ({best_raw:.1f}) ms, ratio {ours / raw:.2f}x "
            f"({best_ours / best_raw:.2f}x) (target <= 1.2x)"
        )


def part_mnist(images):
    from end_to_end import MLP  # the same MNIST MLP as the single-process benchmark

    import dbr.distributed as dist
    import dbr.links as L
    from dbr.datasets import SerialIterator, concat_examples, get_mnist
    from dbr.training import optimizers

    comm = dist.create_communicator("flat")
    train = get_mnist()[0] if comm.rank == 0 else None
    if comm.rank == 0 and images:
        train = train[:images]
    train = dist.scatter_dataset(train, comm, shuffle=True, seed=0)
    model = L.Classifier(MLP())
    optimizer = dist.create_multi_node_optimizer(optimizers.MomentumSGD(lr=0.01), comm)
    optimizer.setup(model)
    iterator = SerialIterator(train, 100, repeat=False, shuffle=True)
    x, t = concat_examples(train[:100])
    optimizer.update(model, x, t)  # the broadcast step, and the lazy start-up, untimed
    comm.mpi_comm.Barrier()
    start = time.perf_counter()
    seen = 0
    for batch in iterator:
        x, t = concat_examples(batch)
        optimizer.update(model, x, t)
        seen += len(batch)
    comm.mpi_comm.Barrier()
    elapsed = time.perf_counter() - start
    total = comm.allreduce_obj(seen)
    if comm.rank == 0:
        print(
            f"MNIST {comm.size} ranks: {total} images in {elapsed:.2f} s: {total / elapsed:.0f}/s"
        )


def _mpiexec():
    found = shutil.which(
        "mpiexec",
        path=os.pathsep.join([str(pathlib.Path(sys.executable).parent), os.environ["PATH"]]),
    )
    if found is None:
        sys.exit("benchmarks/distributed.py needs mpiexec: pip install 'dbr-distributed[mpich]'")
    return found


def _run(n, *args):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    done = subprocess.run(
        [_mpiexec(), "-n", str(n), sys.executable, str(HERE), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"mpiexec -n {n} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout.strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["mean_grad", "mnist"], help=argparse.SUPPRESS)
    parser.add_argument(
        "--repeat", type=int, default=20, help="timings of (a), each of raw and ours"
    )
    parser.add_argument("--images", type=int, default=0, help="(b) on this many (0: all 60000)")
    args = parser.parse_args()
    if args.part == "mean_grad":
        part_mean_grad(args.repeat)
        return
    if args.part == "mnist":
        part_mnist(args.images)
        return

    if "DBR_DATASET_MIRROR" not in os.environ and SHARED_DATASETS.is_dir():
        os.environ["DBR_DATASET_MIRROR"] = SHARED_DATASETS.as_uri()
        os.environ.setdefault("DBR_DATASET_ROOT", tempfile.mkdtemp(prefix="dbr-bench-data-"))
    print(f"load average before: {os.getloadavg()}, cores: {os.cpu_count()}")
    print(_run(2, "--part", "mean_grad", "--repeat", str(args.repeat)))
    lines = [_run(n, "--part", "mnist", "--images", str(args.images)) for n in (1, 2)]
    rates = [float(line.rsplit(":", 1)[1].rstrip("/s")) for line in lines]
    for line in lines:
        print(f"(b) {line}")
    print(f"(b) speed-up at 2 ranks: {rates[1] / rates[0]:.2f}x (target >= 1.6x)")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
