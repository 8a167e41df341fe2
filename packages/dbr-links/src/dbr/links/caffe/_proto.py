"""The part of Caffe's ``caffe.proto`` that dbr reads and writes: field numbers and defaults.

Written from the field numbers of BVLC Caffe's published ``caffe.proto``;
fields dbr does not use are skipped when read. ``V1_TYPES`` maps the enum of
the old ``layers`` field (V1LayerParameter) to the current type names.
"""

from dbr.links.caffe._wire import Field, Schema

BLOB_SHAPE = Schema("BlobShape", {1: Field("dim", "int", repeated=True)})

BLOB = Schema(
    "BlobProto",
    {
        7: Field("shape", BLOB_SHAPE),
        5: Field("data", "float", repeated=True),
        8: Field("double_data", "double", repeated=True),
        1: Field("num", "int"),
        2: Field("channels", "int"),
        3: Field("height", "int"),
        4: Field("width", "int"),
    },
)


def _window_fields(kernel_h, kernel_w, stride_h, stride_w):
    return {
        9: Field("pad_h", "uint"),
        10: Field("pad_w", "uint"),
        kernel_h: Field("kernel_h", "uint"),
        kernel_w: Field("kernel_w", "uint"),
        stride_h: Field("stride_h", "uint"),
        stride_w: Field("stride_w", "uint"),
    }


CONVOLUTION = Schema(
    "ConvolutionParameter",
    {
        1: Field("num_output", "uint"),
        2: Field("bias_term", "bool", default=True),
        3: Field("pad", "uint", repeated=True),
        4: Field("kernel_size", "uint", repeated=True),
        6: Field("stride", "uint", repeated=True),
        18: Field("dilation", "uint", repeated=True),
        5: Field("group", "uint", default=1),
        16: Field("axis", "int", default=1),
        **_window_fields(11, 12, 13, 14),
    },
)

POOLING = Schema(
    "PoolingParameter",
    {
        1: Field("pool", "enum", names={0: "MAX", 1: "AVE", 2: "STOCHASTIC"}),
        4: Field("pad", "uint"),
        2: Field("kernel_size", "uint"),
        3: Field("stride", "uint", default=1),
        12: Field("global_pooling", "bool"),
        **_window_fields(5, 6, 7, 8),
    },
)
POOL_MAX, POOL_AVE = 0, 1

INNER_PRODUCT = Schema(
    "InnerProductParameter",
    {
        1: Field("num_output", "uint"),
        2: Field("bias_term", "bool", default=True),
        5: Field("axis", "int", default=1),
        6: Field("transpose", "bool"),
    },
)

LRN = Schema(
    "LRNParameter",
    {
        1: Field("local_size", "uint", default=5),
        2: Field("alpha", "float", default=1.0),
        3: Field("beta", "float", default=0.75),
        4: Field("norm_region", "enum", names={0: "ACROSS_CHANNELS", 1: "WITHIN_CHANNEL"}),
        5: Field("k", "float", default=1.0),
    },
)

RELU = Schema("ReLUParameter", {1: Field("negative_slope", "float")})
DROPOUT = Schema("DropoutParameter", {1: Field("dropout_ratio", "float", default=0.5)})
BATCH_NORM = Schema(
    "BatchNormParameter",
    {
        1: Field("use_global_stats", "bool"),
        2: Field("moving_average_fraction", "float", default=0.999),
        3: Field("eps", "float", default=1e-5),
    },
)
SCALE = Schema(
    "ScaleParameter",
    {1: Field("axis", "int", default=1), 2: Field("num_axes", "int", default=1),
     4: Field("bias_term", "bool")},
)  # fmt: skip
ELTWISE = Schema(
    "EltwiseParameter",
    {
        1: Field("operation", "enum", default=1, names={0: "PROD", 1: "SUM", 2: "MAX"}),
        2: Field("coeff", "float", repeated=True),
    },
)
ELTWISE_PROD, ELTWISE_SUM, ELTWISE_MAX = 0, 1, 2
CONCAT = Schema(
    "ConcatParameter",
    {2: Field("axis", "int", default=1), 1: Field("concat_dim", "uint", default=1)},
)
SLICE = Schema(
    "SliceParameter",
    {3: Field("axis", "int", default=1), 2: Field("slice_point", "uint", repeated=True),
     1: Field("slice_dim", "uint", default=1)},
)  # fmt: skip
RESHAPE = Schema(
    "ReshapeParameter",
    {
        1: Field("shape", BLOB_SHAPE),
        2: Field("axis", "int"),
        3: Field("num_axes", "int", default=-1),
    },
)
INPUT = Schema("InputParameter", {1: Field("shape", BLOB_SHAPE, repeated=True)})
SOFTMAX = Schema("SoftmaxParameter", {2: Field("axis", "int", default=1)})

# Parameter messages by their attribute name, with their field numbers in
# LayerParameter and in V1LayerParameter (None: V1 has no such field).
_PARAMS = {
    "convolution_param": (CONVOLUTION, 106, 10),
    "pooling_param": (POOLING, 121, 19),
    "inner_product_param": (INNER_PRODUCT, 117, 17),
    "lrn_param": (LRN, 118, 18),
    "relu_param": (RELU, 123, 30),
    "dropout_param": (DROPOUT, 108, 12),
    "batch_norm_param": (BATCH_NORM, 139, None),
    "scale_param": (SCALE, 142, None),
    "eltwise_param": (ELTWISE, 110, 24),
    "concat_param": (CONCAT, 104, 9),
    "slice_param": (SLICE, 126, 31),
    "reshape_param": (RESHAPE, 133, None),
    "softmax_param": (SOFTMAX, 125, 39),
}

LAYER = Schema(
    "LayerParameter",
    {
        1: Field("name", "string"),
        2: Field("type", "string"),
        3: Field("bottom", "string", repeated=True),
        4: Field("top", "string", repeated=True),
        10: Field("phase", "enum", names={0: "TRAIN", 1: "TEST"}),
        7: Field("blobs", BLOB, repeated=True),
        **{number: Field(name, schema) for name, (schema, number, _) in _PARAMS.items()},
        143: Field("input_param", INPUT),
    },
)

V1_LAYER = Schema(
    "V1LayerParameter",
    {
        4: Field("name", "string"),
        5: Field("type", "enum"),
        2: Field("bottom", "string", repeated=True),
        3: Field("top", "string", repeated=True),
        6: Field("blobs", BLOB, repeated=True),
        **{number: Field(name, schema) for name, (schema, _, number) in _PARAMS.items() if number},
    },
)

NET = Schema(
    "NetParameter",
    {
        1: Field("name", "string"),
        100: Field("layer", LAYER, repeated=True),
        2: Field("layers", V1_LAYER, repeated=True),
    },
)

# V1LayerParameter.LayerType's values, by the type name of the current format.
V1_TYPES = {
    3: "Concat", 4: "Convolution", 5: "Data", 39: "Deconvolution", 6: "Dropout", 25: "Eltwise",
    14: "InnerProduct", 15: "LRN", 17: "Pooling", 18: "ReLU", 19: "Sigmoid", 20: "Softmax",
    21: "SoftmaxWithLoss", 22: "Split", 33: "Slice", 23: "TanH",
    1: "Accuracy", 2: "BNLL", 8: "Flatten", 9: "HDF5Data", 12: "ImageData", 29: "MemoryData",
    24: "WindowData", 32: "DummyData", 35: "AbsVal", 26: "Power", 34: "MVN", 38: "Exp",
}  # fmt: skip
