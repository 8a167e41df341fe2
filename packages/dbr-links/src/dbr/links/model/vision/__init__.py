"""Image-classification architectures (VGG, ResNet, GoogLeNet) and their ``prepare`` helpers.

Each module (``vgg``, ``resnet``, ``googlenet``) also has its own ``prepare``
function, which resizes an image and subtracts that network's mean.
"""

from dbr.links.model.vision.googlenet import GoogLeNet
from dbr.links.model.vision.resnet import (
    BottleneckA,
    BottleneckB,
    BuildingBlock,
    ResNet50Layers,
    ResNet101Layers,
    ResNet152Layers,
    ResNetLayers,
)
from dbr.links.model.vision.vgg import VGG16Layers, VGG19Layers

__all__ = [
    "BottleneckA",
    "BottleneckB",
    "BuildingBlock",
    "GoogLeNet",
    "ResNet101Layers",
    "ResNet152Layers",
    "ResNet50Layers",
    "ResNetLayers",
    "VGG16Layers",
    "VGG19Layers",
]
