"""Noise-injecting functions: dropout and friends."""
