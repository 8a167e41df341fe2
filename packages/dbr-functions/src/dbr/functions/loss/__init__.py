"""Loss functions."""
