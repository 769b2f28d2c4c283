"""Rule `provenance`: what decided the corpus (corpusbuilder.common.provenance) →
results/stats/provenance.json. Inputs: the `best` preset's `model` (none with a jusText preset),
and the corpus files and funnel, only waited for; params: `config`, the effective config."""

import logging

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.common.provenance import provenance, write_provenance

setup_logging(snakemake.log[0])
# an empty input list (a jusText preset) may leave no `model` entry at all
model = next(iter(dict(snakemake.input.items()).get("model") or []), None)
record = provenance(dict(snakemake.params.config), model)
write_provenance(record, snakemake.output.record)
logging.getLogger("corpusbuilder.provenance").info(
    "corpusbuilder %s, model %s", record["corpusbuilder"], (record["model"] or {}).get("sha256")
)
