"""Connection functions: linear, convolutions, embeddings, ..."""
