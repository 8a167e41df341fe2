"""Model links: the Classifier wrapper and the image-classification architectures."""

from dbr.links.model.classifier import Classifier
from dbr.links.model.vision import (
    GoogLeNet,
    ResNet50Layers,
    ResNet101Layers,
    ResNet152Layers,
    VGG16Layers,
    VGG19Layers,
)

__all__ = [
    "Classifier",
    "GoogLeNet",
    "ResNet101Layers",
    "ResNet152Layers",
    "ResNet50Layers",
    "VGG16Layers",
    "VGG19Layers",
]
