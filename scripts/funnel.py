"""Rule `funnel`: the finished corpus's account → results/stats/funnel.tsv and skipped.tsv
(documents and words after each step, and why documents were lost: corpusbuilder.funnel) and
results/stats/provenance.json (what decided the corpus: corpusbuilder.common.provenance).
Inputs: `counts`, every shard's part of the funnel (rule export), and block dedup's tables
(whose writers the record names), lists in shard order (params `shards`), block dedup's as
`contracts.files.dedup_tables_of` reads them; the `best` preset's `model` (none with a jusText
preset, or a model of the installation under a storage provider: params `installed_model`);
`files`, the stage files whose writers the record names, and the corpus, only waited for.
Params: `config`, the effective config; `files`, {rule: {shard or hash range: file}};
`file_inputs`, the input `files` as the workflow names them."""

import logging

from corpusbuilder.common.io import atomic_path
from corpusbuilder.common.logs import setup_logging
from corpusbuilder.common.provenance import provenance, write_provenance
from corpusbuilder.contracts.files import dedup_table, dedup_tables_of
from corpusbuilder.contracts.stamps import file_writer
from corpusbuilder.funnel import FunnelCounts, funnel_tables, read_counts

setup_logging(snakemake.log[0])
log = logging.getLogger("corpusbuilder.funnel")
inputs = snakemake.input
shards = snakemake.params.shards
total = sum(map(read_counts, inputs.counts), FunnelCounts())
funnel, skipped = funnel_tables(total)
for table, path in ((funnel, snakemake.output.funnel), (skipped, snakemake.output.skipped)):
    with atomic_path(path) as tmp:
        table.to_csv(tmp, sep="\t", index=False)
log.info("funnel:\n%s", funnel.to_string(index=False))

# an empty input list (a jusText preset) may leave no `model` entry at all
model = next(iter(dict(inputs.items()).get("model") or []), None) or snakemake.params.get(
    "installed_model"
)
# Each stage file where this job has it: the input `files` (params `file_inputs` their workflow
# paths), a table of the sequential dedup job's folder in it. Not the workflow path itself: under
# a default storage provider (docs/cluster.md) the inputs are local copies elsewhere.
here = dict(zip(snakemake.params.file_inputs, inputs.files, strict=True))
dedup = dedup_tables_of(dict(inputs.items()), shards)
here.update((dedup_table(shard), path) for shard, path in zip(shards, dedup, strict=True) if path)
writers = {
    stage: {key: file_writer(here[path]) for key, path in files.items()}
    for stage, files in snakemake.params.files.items()
}
record = provenance(dict(snakemake.params.config), model, writers)
write_provenance(record, snakemake.output.record)
log.info(
    "corpusbuilder %s, model %s", record["corpusbuilder"], (record["model"] or {}).get("sha256")
)
for rule, libraries in record["mixed_versions"].items():
    for name, versions in libraries.items():
        log.warning(
            "rule %s's files were written with %s %s: its shards (or hash ranges) come from runs "
            "apart (which: provenance.json; snakemake --cores N -R %s makes them one)",
            rule,
            name,
            ", ".join(versions),
            rule,
        )
