#!/usr/bin/env bash
# Build the onion C tool (Pomikálek & Jakubíček, onion 2011-2020) as a peer for
# bench/onion_reference.py. onion is on no registry this machine reaches, but the PyPI package
# dalla-data-processing 0.0.12 ships its sources (refactored in 2023 to read a list of files):
#   src/     the onion loop that judges a paragraph by its tokens covered by seen n-grams
#   src_sc/  the later variant that counts the seen n-grams instead
# Nothing of it is committed; it is downloaded and built into OUT (default
# bench/results/tmp/onion) as OUT/onion-tokens/onion and OUT/onion-ngrams/onion.
#
# Three edits, none to the algorithm: the refactored tool prints no marks, so one line prints
# each <p> paragraph's mark ("PAR\t0|1", in input order) where the tool stores the kept
# paragraphs' n-grams; and two int functions that fall off their end (undefined behaviour, a
# crash at -O3) return properly.
#
#   apt-get install libsparsehash-dev && bash bench/build_onion.sh
set -euo pipefail
out=${1:-bench/results/tmp/onion}
mkdir -p "$out"
out=$(cd "$out" && pwd)
[ -f /usr/include/sparsehash/sparse_hash_map ] || {
    echo "build_onion.sh: needs Google sparsehash headers: apt-get install libsparsehash-dev" >&2; exit 1; }
python3 -m pip download --quiet --no-deps --only-binary :all: dalla-data-processing==0.0.12 -d "$out"
# the sources this bench's figures were measured with, and no other
echo "baffbf9e28112fc257da09f8912a11d75ed3df866654f65991e21db2f76991a0  $out/dalla_data_processing-0.0.12-py3-none-any.whl" \
    | sha256sum --check --quiet
python3 - "$out" <<'EOF'
import re
import sys
import zipfile
from pathlib import Path

out = Path(sys.argv[1])
wheel = zipfile.ZipFile(out / "dalla_data_processing-0.0.12-py3-none-any.whl")
prefix = "dalla_data_processing/deduplication/onion/"
for variant, name in (("src", "onion-tokens"), ("src_sc", "onion-ngrams")):
    build = out / name
    build.mkdir(exist_ok=True)
    for member in ("buzhash.c", "buzhash.h", "version.c", "version.h", "onion.c"):
        (build / member).write_bytes(wheel.read(f"{prefix}{variant}/{member}"))
    source = (build / "onion.c").read_text()
    source, marks = re.subn(r"(// for all paragraphs in the document \(again\)\n\s*for \(par_i[^\n]*\{\n)",
                            r'\1      if (strncmp(tokens[pars[par_i]], par_tag, par_tag_len) == 0)'
                            r' printf("PAR\\t%d\\n", bad_par[par_i]);\n', source)
    source, voids = re.subn(r"\bint process_one_par\(", "void process_one_par(", source)
    source, returns = re.subn(r'(printf\("end of process_one_file\\n"\);\n)\}', r"\1  return 0;\n}", source)
    if (marks, voids, returns) != (1, 1, 1):
        sys.exit(f"build_onion.sh: {variant}/onion.c is not the expected source ({marks}, {voids}, {returns})")
    (build / "onion.c").write_text(source)
EOF
for name in onion-tokens onion-ngrams; do
    (cd "$out/$name" && g++ -O3 -std=c++11 -w onion.c buzhash.c version.c -o onion)
done
echo "built $out/onion-tokens/onion and $out/onion-ngrams/onion"
