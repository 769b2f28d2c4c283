"""A peer for bench_dedup crawl: onion 1.x's loop (Pomikálek's onion.c) re-enacted per document
with numpy on the same token shards, to tell the algorithm's figures from the input's.

    python bench/onion_reference.py DIR stage|raw [OUR_DEDUP_DIR] "SMOOTHING,CROSS,COUNT;..."

DIR is a workflow `work` directory (stage) or a bench --stage '' work directory (raw). Per run:
SMOOTHING onion (runs of <= 20 tokens between removed paragraphs go), justext (our pass) or none;
CROSS 1 = n-grams cross paragraphs inside a page as onion's, 0 = block-bound as ours; COUNT tokens
= share of a paragraph's words covered by already-seen n-grams ending in it (onion 1.x), ngrams =
already-seen n-grams per word (later onion). Input order, n = 10, t = 0.5, G_out after the page.
Prints removed / kept under the bench's metric (10-grams inside blocks) and across blocks.
"""
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from bench_dedup import load_words, tengram_metric

from corpusbuilder.dedup import page_blocks
from corpusbuilder.justext import PRESETS
from corpusbuilder.ngrams import ngram_hashes


def doc_offsets(path):
    with np.load(path) as t:
        bo = t["block_offsets"]; bd = t["block_doc"]; nd = len(t["doc_ids"])
    first_block = np.searchsorted(bd, np.arange(nd + 1))
    return bo[first_block], first_block

def simulate(tokens, blocks, n=10, t=0.5, smoothing="onion", stub=20, cross=True, count="tokens"):
    shards = []
    for p in tokens:
        words, bo = load_words(p, "all")
        dof, fb = doc_offsets(p)
        units = dof if cross else bo
        h, starts = ngram_hashes(words, units, n)
        shards.append((words, bo, dof, fb, h, starts))
    allh = np.concatenate([s[4] for s in shards])
    u, c = np.unique(allh, return_counts=True)
    g2 = u[c >= 2]
    gout = set()
    kept_all = []
    for si, (words, bo, dof, fb, h, starts) in enumerate(shards):
        isdup = np.isin(h, g2)
        ends = starts + n - 1
        kept = np.ones(len(bo) - 1, bool)
        pages = None
        if smoothing == "justext":
            with np.load(tokens[si]) as tt:
                pages = page_blocks(pd.read_parquet(blocks[si]), [str(x) for x in tt["doc_ids"]], tt["block_doc"], tt["block_index"])
        for d in range(len(dof) - 1):
            lo, hi = dof[d], dof[d + 1]
            b0, b1 = fb[d], fb[d + 1]
            if b1 == b0: continue
            a, z = np.searchsorted(starts, [lo, hi])
            dh, de, dd = h[a:z], ends[a:z], isdup[a:z]
            # bad n-grams: in local (earlier in doc) or in gout
            rep = np.ones(len(dh), bool); rep[np.unique(dh, return_index=True)[1]] = False
            ing = np.fromiter((x in gout for x in dh[dd].tolist()), bool, count=int(dd.sum()))
            bad = rep.copy(); bad[np.flatnonzero(dd)[ing]] = True
            pb = bo[b0:b1 + 1]  # paragraph bounds
            par_of_end = np.searchsorted(pb, de, side="right") - 1
            e = de[bad]; ps = pb[par_of_end[bad]]
            s0 = np.maximum(e - n + 1, ps)
            diff = np.zeros(hi - lo + 1, np.int64)
            np.add.at(diff, s0 - lo, 1); np.add.at(diff, e + 1 - lo, -1)
            cov = np.cumsum(diff[:-1]) > 0
            covered = np.add.reduceat(cov, pb[:-1] - lo) if hi > lo else np.zeros(0)
            covered = np.where(np.diff(pb) > 0, covered, 0)
            if count == "ngrams":
                covered = np.bincount(par_of_end[bad], minlength=len(pb) - 1)
            lens = np.diff(pb)
            badp = (lens > 0) & (covered > t * lens)
            if smoothing == "onion":
                last = -1; run = 0
                for i in range(len(lens) + 1):
                    if i == len(lens) or badp[i]:
                        if run <= stub: badp[last + 1:i] = True
                        last = i; run = 0
                    else:
                        run += lens[i]
            elif smoothing == "justext" and badp.any():
                badp = ~pages.kept_blocks(d, b0, badp, PRESETS["default"], 0) | badp
            kept[b0:b1] = ~badp
            send = dh[dd & ~badp[par_of_end]]
            gout.update(send.tolist())
        kept_all.append(kept)
    return kept_all

def metric_cross(tokens, kept):
    """10-grams over each document's token stream (crossing blocks), of the kept blocks only."""
    hs = []
    for i, p in enumerate(tokens):
        words, bo = load_words(p, "all")
        dof, _ = doc_offsets(p)
        k = np.ones(len(bo) - 1, bool) if kept is None else kept[i]
        keep = np.repeat(k, np.diff(bo))
        # new doc offsets over kept tokens
        cum = np.concatenate(([0], np.cumsum(keep)))
        hs.append(ngram_hashes(words[keep], cum[dof], 10)[0])
    _, c = np.unique(np.concatenate(hs), return_counts=True)
    return {"dup": int(c[c >= 2].sum()), "distinct": len(c)}

def kept_of_outputs(tokens, outputs):
    res = []
    for p, o in zip(tokens, outputs):
        out = pd.read_parquet(o)
        with np.load(p) as t:
            idx = pd.MultiIndex.from_arrays([t["doc_ids"][t["block_doc"]], t["block_index"]])
        res.append(out.set_index(["doc_id", "block_index"]).final_class.reindex(idx).to_numpy() == "good")
    return res

def report(name, tokens, kept, b_in, b_cross):
    a_in = tengram_metric(tokens, kept); a_cross = metric_cross(tokens, kept)
    print(f"{name}: within-block removed {1 - a_in['duplicate_10gram_instances']/b_in['duplicate_10gram_instances']:.4f} kept {a_in['distinct_10grams']/b_in['distinct_10grams']:.4f} | "
          f"cross-block removed {1 - a_cross['dup']/b_cross['dup']:.4f} kept {a_cross['distinct']/b_cross['distinct']:.4f}", flush=True)

if __name__ == "__main__":
    d = Path(sys.argv[1]); mode = sys.argv[2]
    if mode == "stage":
        names = sorted(p.name.removesuffix(".npz") for p in (d / "tokens").glob("*.npz"))
        tokens = [d / "tokens" / f"{x}.npz" for x in names]; blocks = [d / "extract" / f"{x}.blocks.parquet" for x in names]
    else:
        names = sorted(p.name.removesuffix(".npz") for p in d.glob("*.npz"))
        tokens = [d / f"{x}.npz" for x in names]; blocks = [d / f"{x}.blocks.parquet" for x in names]
    b_in = tengram_metric(tokens, None); b_cross = metric_cross(tokens, None)
    print("before", b_in, b_cross)
    if sys.argv[3]:
        report("ours (" + sys.argv[3] + ")", tokens, kept_of_outputs(tokens, [Path(sys.argv[3]) / f"{x}.parquet" for x in names]), b_in, b_cross)
    for sm, cross, count in [tuple(x.split(",")) for x in sys.argv[4].split(";")]:
        report(f"onion sim smoothing={sm} cross={cross} count={count}", tokens, simulate(tokens, blocks, smoothing=sm, cross=cross == "1", count=count), b_in, b_cross)
