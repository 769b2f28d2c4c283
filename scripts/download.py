"""Snakemake script of the download rule: fetch params.source to output.warc, its sidecar to output.meta.

The params retries, backoff, timeout and copy_local are optional; fetch's defaults apply otherwise.
"""

from corpusbuilder.download import fetch

params, output, log_path = snakemake.params, snakemake.output, snakemake.log[0]  # noqa: F821 (set by Snakemake)
options = {name: params[name] for name in ("retries", "backoff", "timeout", "copy_local") if name in params.keys()}

with open(log_path, "w", encoding="utf-8") as log_file:
    fetch(
        params.source,
        output.warc,
        meta_path=output.meta,
        log=lambda message: print(message, file=log_file, flush=True),
        **options,
    )
