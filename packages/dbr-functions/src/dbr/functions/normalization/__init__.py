"""Normalization functions: batch, layer, group, local response, L2."""
