"""Duplicate n-grams by sorting in chunks (thesis §3.4.2, Table 3.2).

G₂₊ — every n-gram that occurs at least twice in the corpus — drives block de-duplication.
The thesis finds it with memory bounded by configuration, not by corpus size:

1. the token stream is cut into chunks sized from the memory budget; per chunk every distinct
   n-gram is found with its count;
2. each chunk's n-grams are written, sorted, to a run file, and a k-way merge of the runs sums
   the counts: an n-gram seen once in each of two chunks is a duplicate too.

Two departures from the thesis, on purpose. A run is sorted by the n-gram's 64-bit hash
(`ngram_hashes`), not by its word-id sequence: shards are processed independently (in parallel,
and a shard added later never touches the runs of the old ones), and the merge compares uint64
keys with numpy instead of id tuples. The output is those hashes anyway: block de-duplication
tests membership with `np.isin`. And so a chunk's n-grams are counted by sorting their hashes
(`chunk_ngram_counts`), not with word ids, a suffix array and its LCP array (§3.4.2: "generating
the list of sorted n-grams from a suffix array is straightforward"): the suffix array's groups
were hashed and sorted by hash afterwards, so sorting the hashes straight away gives the same
rows with less work and memory. The suffix array stays for spans of any length
(`suffix.chunk_repeated_spans`).

n-grams never cross a block boundary, and the three n-gram kinds of Table 3.3 (all tokens /
no punctuation / no punctuation and no stop words) are token selections made before chunking.

Modules: `hashing` (token selections, n-gram hashes, one chunk's counts), `suffix` (suffix
arrays, repeated spans), `chunks` (chunking by memory budget), `runs` (run files and their
merge), `stage` (the rules' entry points and `corpusbuilder dup-ngrams`).
"""
