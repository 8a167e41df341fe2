"""Classifier: a chain that wraps a predictor and computes its loss and accuracy."""

import dbr.functions as F
from dbr.core import Chain, report


class Classifier(Chain):
    """A predictor with a loss (and accuracy) on an input and label pair.

    Calling the classifier takes the label out of its arguments (by position
    when ``label_key`` is an int, by keyword when it is a str), feeds the
    remaining arguments to ``predictor``, and returns
    ``lossfun(y, t)``. The loss, and the accuracy when
    ``compute_accuracy`` is True, are reported to the current reporter as
    ``'loss'`` and ``'accuracy'`` with the classifier as observer.

    Args:
        predictor (~dbr.core.Link): the network that computes ``y`` from the inputs.
        lossfun (callable): ``lossfun(y, t)`` returns the loss; default
            :func:`dbr.functions.softmax_cross_entropy` (which does not
            support double backprop unless called with
            ``enable_double_backprop=True``).
        accfun (callable): ``accfun(y, t)`` returns the accuracy; default
            :func:`dbr.functions.accuracy`.
        label_key (int or str): where the label is among the call's
            arguments: a positional index (default -1, the last one) or a
            keyword name.

    Attributes:
        predictor: the predictor link (a child of this chain).
        lossfun, accfun, label_key: as given.
        compute_accuracy (bool): whether to compute and report the accuracy
            (default True, a class attribute that instances may override).
        y (~dbr.core.Variable): the prediction of the last call.
        loss (~dbr.core.Variable): the loss of the last call.
        accuracy (~dbr.core.Variable): the accuracy of the last call (None
            when ``compute_accuracy`` is False).

    Raises:
        TypeError: ``label_key`` is neither an int nor a str.

    >>> import numpy
    >>> from dbr.links.connection.linear import Linear
    >>> model = Classifier(Linear(4, 3))
    >>> x = numpy.zeros((2, 4), numpy.float32)
    >>> t = numpy.array([0, 2], numpy.int32)
    >>> model(x, t).shape
    ()
    """

    compute_accuracy = True

    def __init__(
        self, predictor, lossfun=F.softmax_cross_entropy, accfun=F.accuracy, label_key=-1
    ):
        if not isinstance(label_key, (int, str)):
            raise TypeError(
                f"Classifier: label_key must be int or str, "
                f"got {type(label_key).__name__} {label_key!r}"
            )
        super().__init__()
        self.lossfun = lossfun
        self.accfun = accfun
        self.y = None
        self.loss = None
        self.accuracy = None
        self.label_key = label_key
        with self.init_scope():
            self.predictor = predictor

    def forward(self, *args, **kwargs):
        """Compute the loss of the predictor on the inputs against the label.

        Args:
            *args: the predictor's positional inputs, with the label at
                ``label_key`` when it is an int.
            **kwargs: the predictor's keyword inputs, with the label at
                ``label_key`` when it is a str.

        Returns:
            ~dbr.core.Variable: the loss.

        Raises:
            ValueError: the label is not among the arguments (an int
                ``label_key`` out of range of the positional arguments, or a
                str ``label_key`` not among the keyword arguments).
        """
        key = self.label_key
        if isinstance(key, int):
            n = len(args)
            if not -n <= key < n:
                raise ValueError(
                    f"Classifier: Label key {key} is out of bounds for the "
                    f"{n} positional argument(s) given (expected -{n} <= label_key < {n})"
                )
            t = args[key]
            key %= n
            args = args[:key] + args[key + 1 :]
        else:
            if key not in kwargs:
                raise ValueError(
                    f'Classifier: Label key "{key}" is not found among the keyword '
                    f"arguments given ({', '.join(sorted(kwargs)) or 'none'})"
                )
            t = kwargs.pop(key)

        self.y = None
        self.loss = None
        self.accuracy = None
        self.y = self.predictor(*args, **kwargs)
        self.loss = self.lossfun(self.y, t)
        report({"loss": self.loss}, self)
        if self.compute_accuracy:
            self.accuracy = self.accfun(self.y, t)
            report({"accuracy": self.accuracy}, self)
        return self.loss
