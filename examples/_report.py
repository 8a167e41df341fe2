"""What the Trainer examples show while they run: a log row per epoch, a progress bar, plots.

The examples that train with a Trainer (``convnet/``, ``digits/``, ``mnist/``,
``vae/``) share this helper, as the image examples share ``_png.py``: each
puts this folder on ``sys.path`` and imports it. A trainer snapshot restores
the state of the extensions registered before it is loaded, so an example
calls these before it loads the snapshot given by ``--resume``.
"""

from dbr.training import extensions

# The log entries a classifier example prints, one row per epoch.
CLASSIFIER_ENTRIES = (
    "epoch",
    "main/loss",
    "validation/main/loss",
    "main/accuracy",
    "validation/main/accuracy",
    "elapsed_time",
)


def extend_report(trainer, entries=CLASSIFIER_ENTRIES, update_interval=10):
    """Print ``entries`` of the log at every log row and show a progress bar.

    Args:
        trainer (~dbr.training.Trainer): the trainer to extend; it must have
            a LogReport.
        entries (sequence of str): the log entries printed, in order.
        update_interval (int): iterations between two updates of the bar.
    """
    trainer.extend(extensions.PrintReport(list(entries)))
    trainer.extend(extensions.ProgressBar(update_interval=update_interval))


def extend_classifier_plots(trainer):
    """Plot the training and validation loss (``loss.png``) and accuracy (``accuracy.png``)."""
    for kind in ("loss", "accuracy"):
        trainer.extend(
            extensions.PlotReport(
                [f"main/{kind}", f"validation/main/{kind}"], x_key="epoch", filename=f"{kind}.png"
            )
        )
