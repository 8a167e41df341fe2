"""Find the nearest words, by cosine similarity, in embeddings saved by train_word2vec.py.

Reads ``DIR/embeddings.npz`` (array ``W``) and ``DIR/vocab.txt`` (one word a
line, by id). With ``--query WORD`` (repeatable) it prints the ``--top``
nearest words of each query; without, it asks for words interactively until
an empty line or end of input.

Install: ``pip install dbr-core`` (it reads the vectors train_word2vec.py saved).
Run: ``python examples/word2vec/search.py --dir result/word2vec --query money``.
"""

import argparse
import os

import numpy


def load_embeddings(directory):
    """``(W, words)``: the embedding matrix and the list of words by id, from ``directory``."""
    with numpy.load(os.path.join(directory, "embeddings.npz")) as f:
        W = f["W"]
    with open(os.path.join(directory, "vocab.txt"), encoding="utf-8") as f:
        words = [line.rstrip("\n") for line in f]
    if len(words) != len(W):
        raise ValueError(
            f"search: {directory} holds {len(W)} embeddings but {len(words)} words in vocab.txt"
        )
    return W, words


def normalize(W):
    """``W`` with each row scaled to unit length (zero rows stay zero)."""
    norms = numpy.linalg.norm(W, axis=1, keepdims=True)
    return W / numpy.maximum(norms, 1e-12)


def nearest(W_unit, words, word, top=5):
    """The ``top`` words most similar to ``word`` as ``[(word, cosine), ...]``, best first.

    ``W_unit`` holds unit-length rows (see :func:`normalize`); ``word`` itself
    is left out. Raises KeyError for a word not in ``words``.
    """
    try:
        index = words.index(word)
    except ValueError:
        raise KeyError(word) from None
    similarity = W_unit @ W_unit[index]
    similarity[index] = -numpy.inf
    best = numpy.argsort(-similarity)[:top]
    return [(words[i], float(similarity[i])) for i in best]


def _print_nearest(W_unit, words, word, top):
    try:
        result = nearest(W_unit, words, word, top)
    except KeyError:
        print(f"{word!r} is not in the vocabulary")
        return None
    print(f"query: {word}")
    for other, similarity in result:
        print(f"  {other:20s} {similarity:.4f}")
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="result/word2vec", help="train_word2vec.py's --out")
    parser.add_argument("--query", action="append", help="a word to look up (repeatable)")
    parser.add_argument("--top", type=int, default=5, help="how many neighbours to print")
    args = parser.parse_args(argv)

    W, words = load_embeddings(args.dir)
    W_unit = normalize(W.astype(numpy.float64))
    if args.query:
        return {q: _print_nearest(W_unit, words, q, args.top) for q in args.query}
    results = {}
    while True:
        try:
            query = input(">> ").strip()
        except EOFError:
            break
        if not query:
            break
        results[query] = _print_nearest(W_unit, words, query, args.top)
    return results


if __name__ == "__main__":
    main()
