"""Duplicate n-grams by suffix sorting in chunks (thesis §3.4.2, Table 3.2).

G₂₊ — every n-gram that occurs at least twice in the corpus — drives block de-duplication.
The thesis finds it with memory bounded by configuration, not by corpus size:

1. words → integer ids in order of first appearance (frequent words get small ids);
2. the token stream is cut into chunks sized from the memory budget; per chunk a suffix array
   and its LCP array give every distinct n-gram of the chunk with its count (§3.4.2: "generating
   the list of sorted n-grams from a suffix array is straightforward");
3. each chunk's n-grams are written, sorted and compressed, to a run file, and a k-way merge
   of the runs sums the counts: an n-gram seen once in each of two chunks is a duplicate too.

One departure from the thesis, on purpose: a run is sorted by the n-gram's 64-bit hash
(`ngram_hashes`), not by its word-id sequence. Word ids are then needed only inside a chunk, so
shards are processed independently (in parallel, and a shard added later never touches the runs
of the old ones), and the merge compares uint64 keys with numpy instead of id tuples. The
output is those hashes anyway: block de-duplication tests membership with `np.isin`.

n-grams never cross a block boundary, and the three n-gram kinds of Table 3.3 (all tokens /
no punctuation / no punctuation and no stop words) are token selections made before chunking.

Modules: `hashing` (token selections, n-gram hashes), `suffix` (one chunk's n-gram counts),
`chunks` (chunking by memory budget), `runs` (run files and their merge), `stage` (the rules'
entry points and `corpusbuilder dup-ngrams`).
"""
