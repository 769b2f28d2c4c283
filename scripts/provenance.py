"""Rule `provenance`: what decided the corpus (corpusbuilder.common.provenance) →
results/stats/provenance.json. Inputs: the `best` preset's `model` (none with a jusText preset),
`files`, every shard's stage tables and the dedup stages' token and n-gram files, whose writers
it records, and the corpus files and funnel, only waited for; params: `config`, the effective
config, and `files`, {rule: {shard or hash range: file}}."""

import logging

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.common.provenance import provenance, write_provenance
from corpusbuilder.stamps import file_writer

setup_logging(snakemake.log[0])
log = logging.getLogger("corpusbuilder.provenance")
# an empty input list (a jusText preset) may leave no `model` entry at all
model = next(iter(dict(snakemake.input.items()).get("model") or []), None)
writers = {
    stage: {shard: file_writer(path) for shard, path in files.items()}
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
