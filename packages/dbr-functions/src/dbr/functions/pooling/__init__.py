"""Pooling functions: max, average, unpooling, ROI pooling and alignment."""
