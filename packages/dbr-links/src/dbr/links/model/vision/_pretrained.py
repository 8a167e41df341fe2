"""What the pre-trained vision models share.

Finding their weights (:func:`resolve_pretrained`), preparing an image for
them (:func:`prepare_image`, behind every module's ``prepare``), running
their ordered layer table (:func:`forward_layers`), the ``extract``/``predict``
procedures (:func:`extract`, :func:`predict`, with Caffe's ten-crop
:func:`oversample`) and the base class that gives the models those methods
(:class:`PretrainedLayers`).

dbr downloads no weights: ``pretrained_model='auto'`` looks for the file
under the model directory, ``$DBR_MODEL_ROOT`` (default ``~/.dbr/models``):
the converted npz file, else the published ``.caffemodel``, which it converts.
"""

import os
import warnings

import numpy

import dbr.functions as F
from dbr.core import Chain, Variable, config, no_backprop_mode, to_device, using_config
from dbr.core.serializers import load_npz, save_npz

MODEL_ROOT_ENV = "DBR_MODEL_ROOT"
"""The environment variable naming the folder where ``'auto'`` looks for weights."""

_CHAINER_MODEL_DIR = os.path.join("~", ".chainer", "dataset", "pfnet", "chainer", "models")


def get_model_root():
    """The folder where ``pretrained_model='auto'`` looks for weights.

    ``$DBR_MODEL_ROOT`` when set and not empty, else ``~/.dbr/models``
    (with ``~`` expanded).
    """
    root = os.environ.get(MODEL_ROOT_ENV) or os.path.join("~", ".dbr", "models")
    return os.path.expanduser(root)


def resolve_pretrained(owner, pretrained_model, default_name, caffemodel_name):
    """The path of the weights that ``pretrained_model`` names, checked to exist.

    Models call it before building themselves, so that a missing file
    fails at once rather than after allocating every parameter; they then
    give the path to :func:`load_pretrained`.

    Args:
        owner (str): the model's class name, for error messages.
        pretrained_model (str or os.PathLike): ``'auto'``, else the path of
            an npz file saved by :func:`~dbr.core.serializers.save_npz` or by
            Chainer (same key names), or of the published Caffe model
            (a path ending in ``.caffemodel``).
        default_name (str): the npz file ``'auto'`` looks for in
            :func:`get_model_root`, as Chainer names its converted file
            (e.g. ``'VGG_ILSVRC_16_layers.npz'``).
        caffemodel_name (str): the published Caffe model's file name, which
            ``'auto'`` looks for in the same folder when the npz file is
            not there (e.g. ``'VGG_ILSVRC_16_layers.caffemodel'``).

    Returns:
        str: the file's path (for ``'auto'``, the npz file if it is there,
        else the caffemodel).

    Raises:
        FileNotFoundError: there is no such file; for ``'auto'`` the
            message says that dbr downloads nothing and where to place
            either file.
    """
    if isinstance(pretrained_model, str) and pretrained_model == "auto":
        root = get_model_root()
        path = os.path.join(root, default_name)
        caffemodel = os.path.join(root, caffemodel_name)
        for candidate in (path, caffemodel):
            if os.path.isfile(candidate):
                return candidate
        raise FileNotFoundError(
            f"{owner}: pretrained_model='auto' found no weights at {path} nor {caffemodel}; "
            f"dbr does not download weights. Place there the published Caffe model "
            f"{caffemodel_name} (converted to {default_name} on first use), or an npz file of "
            f"this model saved by dbr (dbr.core.serializers.save_npz) or converted by Chainer "
            f"(Chainer keeps it as {os.path.join(_CHAINER_MODEL_DIR, default_name)}), or set "
            f"${MODEL_ROOT_ENV} to the folder that holds them, or pass the file's path as "
            f"pretrained_model (None builds the model with random weights)"
        )
    path = os.fspath(pretrained_model)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"{owner}: expected pretrained_model to be 'auto', None or the path of an npz "
            f"or .caffemodel file, got {path!r}, which is not a file"
        )
    return path


def load_pretrained(model, path, default_name):
    """Load ``path`` (from :func:`resolve_pretrained`) into ``model``.

    An npz file is loaded with :func:`~dbr.core.serializers.load_npz`. A
    ``.caffemodel`` is read by :class:`~dbr.links.caffe.CaffeFunction` and its
    weights copied by the model's ``_transfer_caffe``; when it is the one
    ``'auto'`` found in the model directory, the converted weights are saved
    next to it as ``default_name``, so that the next ``'auto'`` loads that.
    """
    if not path.endswith(".caffemodel"):
        load_npz(path, model)
        return
    model._transfer_caffe(read_caffemodel(path))
    root = get_model_root()
    if os.path.dirname(os.path.abspath(path)) == os.path.abspath(root):
        save_npz_atomic(os.path.join(root, default_name), model)


def read_caffemodel(path):
    """The :class:`~dbr.links.caffe.CaffeFunction` of ``path``, without its skipped-layer warnings.

    The published files' data, accuracy and loss layers are of no use to the
    models, which take only the weights.
    """
    from dbr.links.caffe import CaffeFunction

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return CaffeFunction(path)


# The Raises of the networks' ``convert_caffemodel_to_npz``, which call convert_caffemodel.
CONVERT_CAFFEMODEL_RAISES = """
        Raises:
            ValueError: a layer of the model is missing from the file or has
                another shape (the message names it).
"""


def convert_caffemodel(model, path_caffemodel, path_npz):
    """Copy the weights of ``path_caffemodel`` into ``model`` and save it as ``path_npz``."""
    model._transfer_caffe(read_caffemodel(path_caffemodel))
    save_npz_atomic(os.fspath(path_npz), model)


def save_npz_atomic(path, model):
    """Save ``model`` to the npz file ``path`` (uncompressed) through a temporary file."""
    partial = f"{path}.partial"
    with open(partial, "wb") as f:
        save_npz(f, model, compression=False)
    os.replace(partial, path)


_PREPARE_DOC = """

    Args:
        image (PIL.Image.Image or numpy.ndarray): an image; an array has
            shape ``(H, W)``, ``(H, W, C)`` or ``(C, H, W)`` (C = 1 or 3), RGB
            channels, and is cast to uint8.
        size (pair of int or None): ``(width, height)`` of the result (PIL's
            order, as Chainer); None keeps the image's size.

    Returns:
        numpy.ndarray: of shape ``(3, height, width)`` and dtype
        ``config.dtype`` (float32 by default), BGR minus{mean}.

    Resizing is bilinear (:func:`dbr.functions.resize_images`), where
    Chainer used PIL's default filter; dbr-links does not depend on Pillow.
"""


def prepare_doc(mean):
    """The docstring sections of a network module's ``prepare``, for ``docstring_tail``.

    Args:
        mean (sequence of 3 float): the BGR mean that ``prepare`` subtracts,
            written as ``(104, 117, 123)`` at the end of the Returns line, or
            on a line of its own where that line would pass 80 columns.
    """
    text = "``(" + ", ".join(f"{m:g}" for m in mean) + ")``"
    fits = len(f"        ``config.dtype`` (float32 by default), BGR minus {text}.") <= 80
    return _PREPARE_DOC.format(mean=(" " if fits else "\n        ") + text)


def prepare_image(image, size, mean):
    """Turn an RGB image into a model input: resized, BGR, mean subtracted, channels first.

    Args:
        image (PIL.Image.Image or numpy.ndarray): an image object with a
            PIL-style ``convert('RGB')`` method (converted to RGB by it), or
            an array of shape ``(H, W)`` (grey), ``(1, H, W)`` (grey),
            ``(3, H, W)`` (RGB), or ``(H, W, C)`` with C = 1 or 2 (grey,
            with alpha), 3 (RGB) or 4 (RGBA, alpha dropped); arrays are cast
            to uint8 first, as Chainer does.
        size (pair of int or None): ``(width, height)`` of the result, in
            PIL's order as Chainer passes it to PIL; None keeps the size.
        mean (sequence of 3 float): the BGR mean to subtract.

    Returns:
        numpy.ndarray: of shape ``(3, height, width)`` and dtype
        ``config.dtype``, BGR channels.

    The resize is bilinear on pixel centres (:func:`dbr.functions.resize_images`
    with ``align_corners=False``), rounded to integers as PIL's uint8 result
    is; it does not low-pass filter when shrinking as PIL does, so shrunk
    images differ slightly from Chainer's.
    """
    if isinstance(image, numpy.ndarray):
        if image.ndim == 3 and image.shape[0] in (1, 3):
            image = image[0] if image.shape[0] == 1 else image.transpose(1, 2, 0)
        image = image.astype(numpy.uint8)
    elif callable(getattr(image, "convert", None)):
        image = numpy.asarray(image.convert("RGB"))
    else:
        raise TypeError(
            f"prepare: expected image to be a numpy.ndarray or a PIL image, "
            f"got {type(image).__name__}"
        )
    if image.ndim == 2:
        image = image[:, :, None]
    if image.ndim != 3 or image.shape[2] not in (1, 2, 3, 4):
        raise ValueError(
            f"prepare: expected an image of shape (H, W), (1, H, W), (3, H, W) or "
            f"(H, W, C) with C in 1..4, got shape {image.shape}"
        )
    image = image[:, :, :3] if image.shape[2] >= 3 else image[:, :, :1].repeat(3, axis=2)

    dtype = numpy.dtype(config.dtype)
    if size:
        width, height = size
        if (height, width) != image.shape[:2]:
            chw = image.transpose(2, 0, 1)[None].astype(numpy.float32)
            chw = F.resize_images(chw, (height, width), align_corners=False).array
            image = numpy.rint(chw[0]).transpose(1, 2, 0)
    image = image[:, :, ::-1].astype(dtype)
    image -= numpy.asarray(mean, dtype=dtype)
    return image.transpose(2, 0, 1)


def oversample(images, crop_dims):
    """Caffe's ten crops of each image: four corners and centre, then their mirrors.

    Args:
        images (numpy.ndarray): a batch of shape ``(N, C, H, W)``.
        crop_dims (pair of int): ``(height, width)`` of the crops.

    Returns:
        numpy.ndarray: of shape ``(10 * N, C, height, width)``; rows
        ``10 * i`` to ``10 * i + 9`` are the crops of image ``i``: top-left,
        top-right, bottom-left, bottom-right, centre, then the same five
        mirrored left to right.
    """
    n, channels, src_h, src_w = images.shape
    dst_h, dst_w = crop_dims
    tops = (0, 0, src_h - dst_h, src_h - dst_h, int(src_h / 2.0 - dst_h / 2.0))
    lefts = (0, src_w - dst_w, 0, src_w - dst_w, int(src_w / 2.0 - dst_w / 2.0))
    crops = numpy.empty((n, 10, channels, dst_h, dst_w), dtype=images.dtype)
    for k, (top, left) in enumerate(zip(tops, lefts)):
        crops[:, k] = images[:, :, top : top + dst_h, left : left + dst_w]
    crops[:, 5:] = crops[:, :5, :, :, ::-1]
    return crops.reshape((10 * n, channels, dst_h, dst_w))


def forward_layers(who, functions, x, layers, kwargs):
    """Run ``functions`` (an ordered ``{layer: [callables]}``) on ``x`` up to the last layer asked.

    Args:
        who (str): the caller, for error messages (e.g. ``'VGG16Layers.forward'``).
        functions (dict): each layer's name to the callables applied in turn.
        x: the input.
        layers (iterable of str): the names of the outputs to return.
        kwargs (dict): the caller's unexpected keyword arguments.

    Returns:
        dict: each requested layer name to its output Variable.

    Raises:
        ValueError: a ``test`` keyword (removed in Chainer v2) or an unknown
            layer name.
        TypeError: another unexpected keyword argument.
    """
    if kwargs:
        if "test" in kwargs:
            raise ValueError(
                f"{who}: the test argument is not supported anymore; "
                "use dbr.core.using_config('train', False)"
            )
        raise TypeError(f"{who}: got unexpected keyword argument(s) {', '.join(kwargs)}")
    targets = set(layers)
    unknown = targets.difference(functions)
    if unknown:
        raise ValueError(
            f"{who}: unknown layer(s) {sorted(unknown)}; expected names among {list(functions)}"
        )
    activations = {}
    h = x
    for key, funcs in functions.items():
        if not targets:
            break
        for func in funcs:
            h = func(h)
        if key in targets:
            activations[key] = h
            targets.remove(key)
    return activations


def reject_train(who, kwargs):
    """Refuse the ``train`` keyword of Chainer v1's GoogLeNet, pointing at ``using_config``."""
    if "train" in kwargs:
        raise ValueError(
            f"{who}: the train argument is not supported anymore; "
            "use dbr.core.using_config('train', ...)"
        )


def predict(model, prepare, images, oversample_crops):
    """``model.predict``: class probabilities of each image, in test mode without backprop.

    Each image is prepared at 256x256; with ``oversample_crops`` the
    probabilities of its ten 224x224 crops (:func:`oversample`) are averaged,
    else the centre crop is used.
    """
    x = numpy.stack([prepare(image, size=(256, 256)) for image in images])
    x = oversample(x, (224, 224)) if oversample_crops else x[:, :, 16:240, 16:240]
    with no_backprop_mode(), using_config("train", False):
        y = model(Variable(to_device(model.device, x)), layers=["prob"])["prob"]
        if oversample_crops:
            y = F.sum(F.reshape(y, (len(y) // 10, 10) + y.shape[1:]), axis=1) / 10
    return y


class PretrainedLayers(Chain):
    """The methods that VGGLayers, ResNetLayers and GoogLeNet share.

    A subclass defines the ``functions`` property (its ordered layer table)
    and sets ``_prepare`` (its module's ``prepare``, as a staticmethod) and
    ``_extract_layers`` (the default ``layers`` of :meth:`extract`);
    GoogLeNet sets ``_rejects_train`` to refuse Chainer v1's ``train``
    argument, as Chainer's GoogLeNet does.
    """

    _rejects_train = False

    @property
    def available_layers(self):
        """The layer names that ``forward`` and ``extract`` accept, in network order."""
        return list(self.functions)

    def forward(self, x, layers=None, **kwargs):
        """Compute the outputs of the requested layers (the network runs up to the last of them).

        Args:
            x (~dbr.core.Variable or numpy.ndarray): a batch of shape
                ``(N, 3, H, W)`` made by the module's :func:`prepare` (the
                class says which sizes the network takes).
            layers (list of str): the names of the outputs wanted (see
                ``available_layers``); default ``['prob']``.

        Returns:
            dict: each requested name to its output Variable.

        Raises:
            ValueError: an unknown layer name, or the ``test`` argument of
                Chainer v1 (use ``using_config('train', False)``).
        """
        if layers is None:
            layers = ["prob"]
        return forward_layers(f"{type(self).__name__}.forward", self.functions, x, layers, kwargs)

    def extract(self, images, layers=None, size=(224, 224), **kwargs):
        """Compute the requested layers' outputs for images given as PIL images or arrays.

        Each image goes through :func:`prepare` with ``size``; the batch
        goes to :meth:`forward`. Unlike :meth:`predict`, the configuration
        is left as it is: wrap the call in ``using_config('train', False)``
        and ``no_backprop_mode()`` to extract features for inference.

        Args:
            images (iterable of PIL.Image.Image or numpy.ndarray): RGB images.
            layers (list of str): the outputs wanted; default ``['fc7']``
                for VGG, ``['pool5']`` for ResNet and GoogLeNet.
            size (pair of int or None): ``(width, height)`` to resize to;
                None keeps the images' size (then all must be equal).

        Returns:
            dict: each requested name to its output Variable.
        """
        who = f"{type(self).__name__}.extract"
        if self._rejects_train:
            reject_train(who, kwargs)
        for name in ("test", "volatile"):
            if name in kwargs:
                raise ValueError(
                    f"{who}: the {name} argument is not supported anymore; "
                    "use dbr.core.using_config ('train' or 'enable_backprop')"
                )
        if kwargs:
            raise TypeError(f"{who}: got unexpected keyword argument(s) {', '.join(kwargs)}")
        if layers is None:
            layers = list(self._extract_layers)
        x = numpy.stack([self._prepare(image, size=size) for image in images])
        return self(Variable(to_device(self.device, x)), layers=layers)

    def predict(self, images, oversample=True):
        """Class probabilities of images, in test mode without backprop.

        Each image is prepared at 256x256; with ``oversample`` the
        probabilities of its ten 224x224 crops (four corners, centre and
        their mirrors) are averaged, else the centre crop is used.

        Args:
            images (iterable of PIL.Image.Image or numpy.ndarray): RGB images.
            oversample (bool): whether to average over ten crops.

        Returns:
            ~dbr.core.Variable: of shape ``(N, 1000)``.
        """
        return predict(self, self._prepare, images, oversample)
