"""CIDEr-D as pycocoevalcap's ``Cider`` computes it: tf-idf n-gram vectors (n = 1..4) with document
frequencies over the references of the images in the call, clipped dot products, a Gaussian length
penalty (sigma 6, length = bigram count), averaged over references and orders, times 10."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ..errors import InputError
from .ngrams import NgramTable

__all__ = ["cider_d"]


def cider_d(table: NgramTable, hyp_sentence: NDArray[np.int64], ref_sentence: NDArray[np.int64],
            ref_image: NDArray[np.int64], n_images: int, *, sigma: float = 6.0,
            max_n: int = 4) -> NDArray[np.float64]:
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
    # sort-based: numpy's hash unique is slow here
    img_gram = np.sort(image_of[table.sentence[r]] * G + table.ngram[r])
    img_gram = img_gram[np.r_[True, img_gram[1:] != img_gram[:-1]]] if len(img_gram) else img_gram
    df = np.bincount(img_gram % G, minlength=G)
    n_img_grams = len(img_gram)
    # (each (sentence, n-gram) array here is ~15 MB on a whole split: freed early)
    del img_gram
    if not n_img_grams:
        raise InputError("every reference caption is empty after tokenization: CIDEr is undefined "
                         "(pycocoevalcap raises here)", file="references",
                         fix="score against references with words in them")
    weight = np.log(float(n_images)) - np.log(np.maximum(1.0, df))
    # tf-idf of every (sentence, n-gram)
    value = table.count * weight[table.ngram]
    so = table.sentence * max_n + (table.order - 1)
    norm = np.sqrt(np.bincount(so, weights=value**2, minlength=S * max_n)).reshape(S, max_n)
    length = np.bincount(table.sentence, weights=np.where(table.order == 2, table.count, 0),
                         minlength=S)
    # clipped dot products: every reference entry meets the hypothesis entry of its image's n-gram
    h = is_hyp[table.sentence]
    h_key = hyp_image[table.sentence[h]] * G + table.ngram[h]
    h_order = np.argsort(h_key)
    h_key, h_val = h_key[h_order], value[h][h_order]
    r_key = image_of[table.sentence[r]] * G + table.ngram[r]
    pos = np.minimum(np.searchsorted(h_key, r_key), max(len(h_key) - 1, 0))
    hit = (h_key[pos] == r_key) if len(h_key) else np.zeros(len(r_key), bool)
    del r_key, h_key
    r_val = value[r]
    # min(hyp, ref) * ref where the hypothesis holds the n-gram, else 0 (in place: no four
    # temporaries)
    contrib = h_val[pos] if len(h_val) else np.zeros(len(r_val))
    del pos
    np.minimum(contrib, r_val, out=contrib)
    contrib *= r_val
    contrib[~hit] = 0.0
    del r_val, hit
    # (R, 4)
    dot = np.bincount(so[r], weights=contrib, minlength=S * max_n).reshape(S, max_n)[ref_sentence]
    h_norm = norm[hyp_sentence][ref_image]                            # (R, 4)
    r_norm = norm[ref_sentence]
    both = (h_norm != 0) & (r_norm != 0)
    val = np.where(both, dot / np.where(both, h_norm * r_norm, 1.0), dot)
    delta = length[hyp_sentence][ref_image] - length[ref_sentence]
    val = val * (np.e ** (-(delta**2) / (2 * sigma**2)))[:, None]
    per_image = np.stack(
        [np.bincount(ref_image, weights=val[:, j], minlength=n_images) for j in range(max_n)],
        axis=1,
    )
    n_refs = np.bincount(ref_image, minlength=n_images)
    return per_image.mean(axis=1) / n_refs * 10.0


class CiderDResampler:
    """Per-image CIDEr-D under image weights (bootstrap): a resample that draws image i k times puts
    k copies of it in the toolkit's call, which changes the document frequencies (df = weighted
    count of images whose references hold the n-gram) and the corpus size N in idf = log N - log
    max(1, df). Every tf-idf product is a fixed count times idf(g)^2, so a resample is a few sparse
    products. N-grams found in the references of one image only (most of them) share that image's
    idf, so they are folded into per-image terms; only the others are kept one by one.
    With all weights 1 this is :func:`cider_d` (tested, also against duplicated images)."""

    def __init__(self, table: NgramTable, hyp_sentence: NDArray[np.int64],
                 ref_sentence: NDArray[np.int64],
                 ref_image: NDArray[np.int64], n_images: int, *, sigma: float = 6.0,
                 max_n: int = 4) -> None:
        from scipy import sparse

        S, G = len(table.length), max(table.n_ngrams, 1)
        ref_index = np.full(S, -1, dtype=np.int64)
        ref_index[ref_sentence] = np.arange(len(ref_sentence))
        hyp_image = np.full(S, -1, dtype=np.int64)
        hyp_image[hyp_sentence] = np.arange(n_images)
        r = ref_index[table.sentence] >= 0
        h = hyp_image[table.sentence] >= 0
        r_ref, r_gram, r_order, r_count = (
            ref_index[table.sentence[r]],
            table.ngram[r],
            table.order[r],
            table.count[r],
        )
        r_image = ref_image[r_ref]
        h_image, h_gram, h_order, h_count = (
            hyp_image[table.sentence[h]],
            table.ngram[h],
            table.order[h],
            table.count[h],
        )
        # documents: (image, n-gram) pairs of the references; kind of each n-gram by its df
        pairs = np.unique(r_image * G + r_gram)
        df = np.bincount(pairs % G, minlength=G)
        doc_image = np.full(G, -1, dtype=np.int64)
        single = df == 1
        doc_image[pairs[single[pairs % G]] % G] = pairs[single[pairs % G]] // G
        multi = np.flatnonzero(df >= 2)
        column = np.full(G, -1, dtype=np.int64)
        column[multi] = np.arange(len(multi))
        Gm = len(multi)
        sel = column[pairs % G] >= 0
        self.doc = sparse.csr_matrix((np.ones(int(sel.sum())),
                                      (pairs[sel] // G, column[pairs[sel] % G])),
                                     shape=(n_images, Gm))
        rows, hrows = len(ref_sentence) * max_n, n_images * max_n
        r_row = r_ref * max_n + r_order - 1
        h_row = h_image * max_n + h_order - 1

        def split(row, gram, value, n_rows):
            """value * idf(gram)^2 summed per row = multi-part (sparse over multi n-grams) +
            single-image parts."""
            m = column[gram] >= 0
            many = sparse.csr_matrix((value[m], (row[m], column[gram[m]])), shape=(n_rows, Gm))
            s1 = doc_image[gram] >= 0
            by_image = sparse.csr_matrix((value[s1], (row[s1], doc_image[gram[s1]])),
                                         shape=(n_rows, n_images))
            # df 0: idf = log N
            unseen = np.bincount(row[~m & ~s1], weights=value[~m & ~s1], minlength=n_rows)
            return many, by_image, unseen

        self.ref_sq = split(r_row, r_gram, (r_count**2).astype(np.float64), rows)
        self.hyp_sq = split(h_row, h_gram, (h_count**2).astype(np.float64), hrows)
        # clipped products: reference entries whose n-gram the image's hypothesis also holds
        h_key = h_image * G + h_gram
        order = np.argsort(h_key)
        h_key, h_cnt = h_key[order], h_count[order]
        r_key = r_image * G + r_gram
        pos = np.minimum(np.searchsorted(h_key, r_key), max(len(h_key) - 1, 0))
        hit = (h_key[pos] == r_key) if len(h_key) else np.zeros(len(r_key), bool)
        clipped = (np.minimum(h_cnt[pos[hit]], r_count[hit]) * r_count[hit]).astype(np.float64)
        self.cross = split(r_row[hit], r_gram[hit], clipped, rows)
        length = np.bincount(table.sentence, weights=np.where(table.order == 2, table.count, 0),
                             minlength=S)
        delta = length[hyp_sentence][ref_image] - length[ref_sentence]
        self.penalty = np.e ** (-(delta**2) / (2 * sigma**2))            # (refs,)
        n_refs = np.bincount(ref_image, minlength=n_images)
        # per image: sum over its references / (orders * references) * 10
        self.to_image = sparse.csr_matrix(((10.0 / (max_n * n_refs[ref_image])),
                                           (ref_image, np.arange(len(ref_image)))),
                                          shape=(n_images, len(ref_image)))
        self.ref_image, self.max_n, self.n_images = ref_image, max_n, n_images

    @staticmethod
    def _apply(parts, idf2_multi, idf2_image, idf2_unseen) -> NDArray[np.float64]:
        many, by_image, unseen = parts
        return (
            np.asarray(many @ idf2_multi)
            + np.asarray(by_image @ idf2_image)
            + unseen[:, None] * idf2_unseen[None, :]
        )

    def __call__(self, weights: NDArray[np.float64]) -> NDArray[np.float64]:
        """``weights`` (R, images) -> per-image CIDEr-D (R, images) in each resample's call."""
        R, n = len(weights), self.max_n
        wt = np.ascontiguousarray(weights.T)
        log_n = np.log(weights.sum(axis=1))                                 # (R,)
        idf_multi = log_n[None, :] - np.log(np.maximum(1.0, np.asarray(self.doc.T @ wt)))
        idf_image = log_n[None, :] - np.log(np.maximum(1.0, wt))
        idf2 = (idf_multi * idf_multi, idf_image * idf_image, log_n * log_n)
        dot = self._apply(self.cross, *idf2).reshape(-1, n, R)             # (refs, n, R)
        r_norm = np.sqrt(self._apply(self.ref_sq, *idf2)).reshape(-1, n, R)
        h_norm = np.sqrt(self._apply(self.hyp_sq, *idf2)).reshape(-1, n, R)[self.ref_image]
        both = (h_norm != 0) & (r_norm != 0)
        val = (
            np.where(both, dot / np.where(both, h_norm * r_norm, 1.0), dot)
            * self.penalty[:, None, None]
        )
        return np.asarray(self.to_image @ val.sum(axis=1)).T
