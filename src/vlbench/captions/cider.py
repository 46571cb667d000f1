"""CIDEr-D as pycocoevalcap's ``Cider`` computes it: tf-idf n-gram vectors (n = 1..4) with document
frequencies over the references of the images in the call, clipped dot products, a Gaussian length
penalty (sigma 6, length = bigram count), averaged over references and orders, times 10."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .ngrams import NgramTable

__all__ = ["cider_d"]


def cider_d(table: NgramTable, hyp_sentence: NDArray[np.int64], ref_sentence: NDArray[np.int64],
            ref_image: NDArray[np.int64], n_images: int, *, sigma: float = 6.0, max_n: int = 4) -> NDArray[np.float64]:
    """Per-image CIDEr-D of the images in one call (the corpus value is their mean)."""
    S = len(table.length)
    image_of = np.full(S, -1, dtype=np.int64)
    image_of[ref_sentence] = ref_image
    is_ref = np.zeros(S, dtype=bool)
    is_ref[ref_sentence] = True
    is_hyp = np.zeros(S, dtype=bool)
    is_hyp[hyp_sentence] = True
    hyp_image = np.full(S, -1, dtype=np.int64)
    hyp_image[hyp_sentence] = np.arange(n_images)
    G = max(table.n_ngrams, 1)
    # document frequency: images with at least one reference holding the n-gram
    r = is_ref[table.sentence]
    img_gram = np.sort(image_of[table.sentence[r]] * G + table.ngram[r])   # sort-based: numpy's hash unique is slow here
    img_gram = img_gram[np.r_[True, img_gram[1:] != img_gram[:-1]]] if len(img_gram) else img_gram
    df = np.bincount(img_gram % G, minlength=G)
    if not len(img_gram):
        raise ValueError("every reference caption is empty: CIDEr is undefined (pycocoevalcap raises here)")
    weight = np.log(float(n_images)) - np.log(np.maximum(1.0, df))
    value = table.count * weight[table.ngram]                        # tf-idf of every (sentence, n-gram)
    so = table.sentence * max_n + (table.order - 1)
    norm = np.sqrt(np.bincount(so, weights=value**2, minlength=S * max_n)).reshape(S, max_n)
    length = np.bincount(table.sentence, weights=np.where(table.order == 2, table.count, 0), minlength=S)
    # clipped dot products: every reference entry meets the hypothesis entry of its image's n-gram
    h = is_hyp[table.sentence]
    h_key = hyp_image[table.sentence[h]] * G + table.ngram[h]
    h_order = np.argsort(h_key)
    h_key, h_val = h_key[h_order], value[h][h_order]
    r_key = image_of[table.sentence[r]] * G + table.ngram[r]
    pos = np.minimum(np.searchsorted(h_key, r_key), max(len(h_key) - 1, 0))
    hit = (h_key[pos] == r_key) if len(h_key) else np.zeros(len(r_key), bool)
    r_val = value[r]
    contrib = np.where(hit, np.minimum(h_val[pos] if len(h_val) else 0, r_val) * r_val, 0.0)
    dot = np.bincount(so[r], weights=contrib, minlength=S * max_n).reshape(S, max_n)[ref_sentence]   # (R, 4)
    h_norm = norm[hyp_sentence][ref_image]                            # (R, 4)
    r_norm = norm[ref_sentence]
    both = (h_norm != 0) & (r_norm != 0)
    val = np.where(both, dot / np.where(both, h_norm * r_norm, 1.0), dot)
    delta = length[hyp_sentence][ref_image] - length[ref_sentence]
    val = val * (np.e ** (-(delta**2) / (2 * sigma**2)))[:, None]
    per_image = np.stack([np.bincount(ref_image, weights=val[:, j], minlength=n_images) for j in range(max_n)], axis=1)
    n_refs = np.bincount(ref_image, minlength=n_images)
    return per_image.mean(axis=1) / n_refs * 10.0
