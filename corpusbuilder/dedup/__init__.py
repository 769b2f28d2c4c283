"""Removing duplicate text blocks with a list of duplicate n-grams (thesis §3.5, Algorithm 3.1).

G₂₊ holds the hashes of every n-gram seen at least twice in the corpus (the ngrams stage,
``work/ngrams/dup{n}/{partition}.npy``: hash ranges, read in order); G_out those already sent to
output. Documents are taken in an order (§3.5: increasing share of duplicate n-grams), and each
unit — a text block (§3.5.2) or a whole document — is judged by the share of its words covered by
n-grams already output: in G_out, or, as the public onion tool counts them, seen earlier in the
same document. Over the threshold it becomes ``duplicate``; otherwise it is kept and its duplicate
n-grams move from G₂₊ to G_out. jusText's context-sensitive pass then runs again with
``duplicate`` acting as ``bad`` (Fig. 3.5), so stubs left between removed duplicates go too.

Speed: G₂₊ ∪ G_out never changes (n-grams only move between the two), so "is this n-gram a
duplicate at all" is answered for a whole shard with one numpy membership test; only the rare
duplicate n-grams reach the per-document loop and the set structures.

Memory: the dup-share order is global, but no more than one shard's tokens are held at a time.
A first pass reads and prepares each shard once (its duplicate n-grams, units and page context),
spills the prepared arrays to a scratch file next to the outputs (`spill`), and keeps per document
only its sort key (share, shard, position) and token count. The sorted keys are cut into buckets of
at most ``bucket_tokens`` tokens; each bucket maps the spilled shards holding its documents, reads
the pages of those documents only, and is processed in order. Per block, three small result arrays
(share, duplicate flag, provenance) live until the output is written. The hash sets keep no
owner per n-gram (the default backend holds 8⅛ bytes per duplicate n-gram); who sent what to
output is logged to disk and joined back for ``duplicate_of`` after the pass (`Provenance`).

Beyond the thesis, a block partly copied can be judged by its parts (`dedup.level` sentence or
span: `document`), and a corpus can be de-duplicated against an earlier one's state (`state`).

Modules: `params` (settings), `store` (G₂₊ and G_out), `provenance_log` (who sent what),
`document` (Algorithm 3.1 on one document), `sentences` (sentence and chunk starts in words),
`spill` (prepared shards on disk between the passes),
`context` (the final classes with duplicates), `state` (an earlier corpus's output n-grams),
`corpus` (the stage: `dedup_corpus`), `verdict_files` (where a job finds the verdicts).
"""
