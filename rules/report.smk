# The thesis' corpus measurements (§3.6: Tables 3.4, 3.7-3.9) and a self-contained HTML report.
# Evaluation outputs are named by path: this file may be included before rules/evaluate.smk.
REPORT_EVALUATION = {
    "boilerplate": "results/stats/boilerplate.tsv",
    "fragmentation": "results/stats/fragmentation.tsv",
    "sweep": "results/stats/sweep.png",
}


def corpus_stats_inputs(wildcards):
    inputs = {
        "funnel": rules.funnel.output.funnel,
        "tokens": expand("work/tokens/{shard}.npz", shard=SHARDS),
        "blocks": expand("work/extract/{shard}.blocks.parquet", shard=SHARDS),
    }
    if config["dedup"]["enabled"]:
        inputs["dedup"] = expand("work/dedup/{shard}.parquet", shard=SHARDS)
        inputs["dedup_stats"] = rules.dedup.output.stats
    return inputs


def report_inputs(wildcards):
    """The corpus stats and every stage's per-shard tables; the gold-set evaluation only when
    its gold sets are there (the report renders whatever exists)."""
    inputs = {
        **{
            key: getattr(rules.corpus_stats.output, key)
            for key in ("funnel_full", "duplicates", "stage_times", "summary")
        },
        "skipped": rules.funnel.output.skipped,
        "docs": expand("work/extract/{shard}.docs.parquet", shard=SHARDS),
        "blocks": expand("work/extract/{shard}.blocks.parquet", shard=SHARDS),
        "language": expand("work/language/{shard}.parquet", shard=SHARDS),
        "exact": expand("work/exact_dedup/{shard}.parquet", shard=SHARDS),
    }
    if config["dedup"]["enabled"]:
        inputs["dedup"] = expand("work/dedup/{shard}.parquet", shard=SHARDS)
    if Path(config["evaluate"]["gold_dir"]).is_dir():
        inputs.update(REPORT_EVALUATION)
    return inputs


# One job for the whole corpus; it holds every shard's 10-gram hashes (16 B per token).
rule corpus_stats:
    input:
        unpack(corpus_stats_inputs),
    output:
        funnel_full="results/stats/funnel_full.tsv",
        duplicates="results/stats/duplicates.tsv",
        stage_times="results/stats/stage_times.tsv",
        summary="results/stats/summary.json",
    log:
        "logs/report/corpus_stats.log",
    conda:
        "../envs/evaluate.yaml"
    threads: 1
    resources:
        mem_mb=lambda wildcards, input: 1000 + 3 * input.size_mb,
    params:
        n=10,
        benchmarks=lambda wildcards: {
            rule.name: str(rule.benchmark) for rule in workflow.rules if rule.benchmark
        },
    script:
        "../scripts/corpus_stats.py"


rule report:
    input:
        unpack(report_inputs),
    output:
        html="results/report.html",
    log:
        "logs/report/report.log",
    conda:
        "../envs/evaluate.yaml"
    threads: 1
    resources:
        mem_mb=lambda wildcards, input: 1000 + 3 * input.size_mb,
    params:
        sample_size=10,
        evaluation=REPORT_EVALUATION,
        shards=SHARDS,
    script:
        "../scripts/report.py"
