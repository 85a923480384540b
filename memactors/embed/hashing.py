"""A deterministic, dependency-free embedder for Chinese and English: signed feature hashing.

Features, all hashed into ``dim`` buckets with a sign bit (so collisions cancel on average):

- words (runs of letters/digits outside CJK), weight 1, common English stop words down-weighted;
- character trigrams inside words, weight 0.5 (catches plurals, typos, inflections);
- CJK characters, weight 0.5, and CJK bigrams, weight 1 (Chinese has no spaces: bigrams are
  the usual stand-in for words).

Everything runs as NumPy over the code points of the whole batch at once: one ``encode`` of
the joined batch, documents cut by their lengths, no Python loop per character. Hashes are fixed arithmetic on code points,
never Python's salted ``hash()``, so vectors are the same in every process and every run.
"""

from __future__ import annotations

import numpy as np

from ..core.errors import InvalidRecord
from .base import register_embedder

_SEP = np.uint32(0x110000)  # one past the last code point
_MIX = np.uint64(0x9E3779B97F4A7C15)
_RNG = np.random.default_rng(0x6D656D61)
_POS = _RNG.integers(1, 2**63, size=64, dtype=np.uint64) | np.uint64(1)  # per-position word weights
_K = _RNG.integers(1, 2**63, size=8, dtype=np.uint64) | np.uint64(1)

_STOP = (
    "a an the and or but if of to in on at by for with from as is are was were be been being am do does did "
    "i you he she it we they me him her us them my your his its our their this that these those what which "
    "who whom so not no yes just very too also can will would could should have has had there here then than"
).split()

_CJK_RANGES = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF))
# Non-letter blocks above ASCII: Latin-1 punctuation, general punctuation, CJK symbols and
# punctuation, full-width forms' punctuation. Everything else above 0xBF counts as a letter.
_PUNCT_RANGES = ((0x80, 0xBF), (0x2000, 0x2BFF), (0x3000, 0x303F), (0xFE30, 0xFE4F), (0xFF00, 0xFF0F),
                 (0xFF1A, 0xFF20), (0xFF3B, 0xFF40), (0xFF5B, 0xFF65))


def _in_ranges(cp: np.ndarray, ranges) -> np.ndarray:
    m = np.zeros(cp.shape, dtype=bool)
    for lo, hi in ranges:
        m |= (cp >= lo) & (cp <= hi)
    return m


def _word_hashes(cp: np.ndarray, word: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hash each run of word characters. Returns (hash per word, start index per word)."""
    idx = np.flatnonzero(word)
    if idx.size == 0:
        return np.empty(0, np.uint64), np.empty(0, np.int64)
    starts_mask = np.ones(idx.size, dtype=bool)
    starts_mask[1:] = idx[1:] != idx[:-1] + 1
    starts = np.flatnonzero(starts_mask)
    run = np.cumsum(starts_mask) - 1
    pos = np.arange(idx.size) - starts[run]
    vals = cp[idx].astype(np.uint64) * _POS[np.minimum(pos, 63)]
    return np.add.reduceat(vals, starts), idx[starts]


_STOP_HASHES = None
# Texts embedded at once, at most: a batch's dense (texts x dim) counts in float64 outgrow the
# CPU's caches (50,000 texts: 154 MB); 50,000 texts took 0.35 s whole, 0.19 s in chunks of 1,024.
CHUNK = 1024


def _stop_hashes() -> np.ndarray:
    global _STOP_HASHES
    if _STOP_HASHES is None:
        joined = np.frombuffer(" ".join(_STOP).encode("utf-32-le"), dtype=np.uint32)
        word = joined != 32
        _STOP_HASHES = np.unique(_word_hashes(joined, word)[0])
    return _STOP_HASHES


class HashEmbedder:
    """Hashed character/word n-grams. Name and dimension go into the store's metadata."""

    name = "hash-ngram-v1"

    def __init__(self, dim: int = 384) -> None:
        self.dim = int(dim)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Float32 unit vectors, shape ``(len(texts), dim)``, for any strs (a text with no word or
        CJK character gets the zero vector). Raises InvalidRecord for anything but a list of str."""
        if not isinstance(texts, (list, tuple)) or not all(isinstance(t, str) for t in texts):
            raise InvalidRecord("the embedder takes a list of str")
        n = len(texts)
        if n == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        if n > CHUNK:  # each text's vector is its own: the same vectors, arrays that stay in cache
            return np.concatenate([self._embed(texts[i:i + CHUNK]) for i in range(0, n, CHUNK)])
        return self._embed(texts)

    def _embed(self, texts) -> np.ndarray:
        n = len(texts)
        # Each text is lowered on its own (lowering may change a text's length, e.g. "İ"), and
        # documents are cut by these lengths, never by a separator character a text could hold.
        # "surrogatepass": a lone surrogate is just another (letter-like) code point here.
        low = [t.lower() for t in texts]
        cp = np.frombuffer("".join(low).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        ends = np.cumsum([len(t) for t in low])
        # _SEP after every document: outside Unicode, so no text holds it; neither word nor CJK.
        cp = np.insert(cp, ends, _SEP)
        sep = cp == _SEP
        doc = np.cumsum(sep) - sep  # document index of every position
        ascii_alnum = ((cp >= 48) & (cp <= 57)) | ((cp >= 97) & (cp <= 122))
        if all(map(str.isascii, low)):  # the usual batch: no CJK, no letter above ASCII (the same masks)
            cjk, word = np.zeros(cp.shape, dtype=bool), ascii_alnum
        else:
            cjk = _in_ranges(cp, _CJK_RANGES)
            word = ascii_alnum | ((cp >= 0xC0) & ~sep & ~cjk & ~_in_ranges(cp, _PUNCT_RANGES))
        c64 = cp.astype(np.uint64)

        feats, weights, docs = [], [], []
        # words
        wh, wstart = _word_hashes(cp, word)
        if wh.size:
            stops = _stop_hashes()  # sorted: membership by binary search (np.isin costs ~60 us a call)
            at = np.searchsorted(stops, wh)
            at[at == len(stops)] = 0
            stop = stops[at] == wh
            feats.append(wh)
            weights.append(np.where(stop, 0.15, 1.0))
            docs.append(doc[wstart])
        # trigrams within words
        tri = word[:-2] & word[1:-1] & word[2:]
        ti = np.flatnonzero(tri)
        if ti.size:
            feats.append(c64[ti] * _K[0] + c64[ti + 1] * _K[1] + c64[ti + 2] * _K[2])
            weights.append(np.full(ti.size, 0.5))
            docs.append(doc[ti])
        # CJK unigrams and bigrams
        ci = np.flatnonzero(cjk)
        if ci.size:
            feats.append(c64[ci] * _K[3])
            weights.append(np.full(ci.size, 0.5))
            docs.append(doc[ci])
            bi = np.flatnonzero(cjk[:-1] & cjk[1:])
            if bi.size:
                feats.append(c64[bi] * _K[4] + c64[bi + 1] * _K[5])
                weights.append(np.full(bi.size, 1.0))
                docs.append(doc[bi])
        out = np.zeros(n * self.dim, dtype=np.float64)
        if feats:
            h = np.concatenate(feats) * _MIX
            w = np.concatenate(weights)
            d = np.concatenate(docs)
            bucket = ((h >> np.uint64(32)) % np.uint64(self.dim)).astype(np.int64)
            sign = np.where((h >> np.uint64(31)) & np.uint64(1), -1.0, 1.0)
            out = np.bincount(d * self.dim + bucket, weights=w * sign, minlength=n * self.dim)
        vecs = out.reshape(n, self.dim).astype(np.float32)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        np.divide(vecs, norms, out=vecs, where=norms > 0)
        return vecs


register_embedder(HashEmbedder.name, HashEmbedder)
