# The thesis' corpus measurements (§3.6: Tables 3.4, 3.7-3.9) and a self-contained HTML report.
# Evaluation outputs are named by path: this file may be included before rules/evaluate.smk.
# The gold-set evaluation is an input only when its gold sets exist (the report renders without).
REPORT_EVALUATION = {
    "boilerplate": FILES.boilerplate,
    "boilerplate_languages": FILES.boilerplate_languages,
    "fragmentation": FILES.fragmentation,
    "sweep": FILES.sweep_png,
    "site_boilerplate": FILES.site_boilerplate,
}
REPORT_WITH_EVALUATION = Path(config["evaluate"]["gold_dir"]).is_dir()
REPORT_DEDUP = (
    {
        "dedup": DEDUP_TABLES,
        "dedup_stats": FILES.dedup_stats,
    }
    if config["dedup"]["enabled"]
    else {}
)


# One job for the whole corpus; it holds one shard, and one hash range of the corpus' 10-gram
# hashes at a time (spilled to its tmpdir, 16 B per token).
rule corpus_stats:
    input:
        **REPORT_DEDUP,
        funnel=FILES.funnel,
        tokens=expand(FILES.tokens, shard=SHARDS),
        blocks=expand(FILES.blocks, shard=SHARDS),
        provenance=FILES.provenance,
        # not read: waited for, so that the stage times include the evaluation's benchmarks
        evaluation=list(REPORT_EVALUATION.values()) if REPORT_WITH_EVALUATION else [],
    output:
        funnel_full=FILES.funnel_full,
        duplicates=FILES.duplicates,
        stage_times=FILES.stage_times,
        summary=FILES.summary,
    log:
        "logs/report/corpus_stats.log",
    conda:
        "../envs/evaluate.yaml"
    threads: 1
    resources:
        mem_mb=corpus_stats_mem_mb,
    params:
        shards=SHARDS,
        similarity=config["similarity"],
        benchmarks=lambda wildcards: {
            rule.name: str(rule.benchmark) for rule in workflow.rules if rule.benchmark
        },
    script:
        "../scripts/corpus_stats.py"


rule report:
    input:
        **rules.corpus_stats.output,
        **({"dedup": REPORT_DEDUP["dedup"]} if REPORT_DEDUP else {}),
        **(REPORT_EVALUATION if REPORT_WITH_EVALUATION else {}),
        skipped=FILES.skipped,
        docs=expand(FILES.docs, shard=SHARDS),
        blocks=expand(FILES.blocks, shard=SHARDS),
        language=expand(FILES.language, shard=SHARDS),
        exact=expand(FILES.exact, shard=SHARDS),
        quality=expand(FILES.quality, shard=SHARDS),
    output:
        html=FILES.report,
    log:
        "logs/report/report.log",
    conda:
        "../envs/evaluate.yaml"
    threads: 1
    resources:
        mem_mb=lambda wildcards, input: 1000 + 3 * input.size_mb,
    params:
        sample_size=10,
        shards=SHARDS,
    script:
        "../scripts/report.py"
