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
REPORT_DEDUP_STATS = (
    {"dedup_stats": FILES.dedup_stats} if config["dedup"]["enabled"] else {}
)
# hash ranges of the report's 10-gram count, one a job
REPORT_RANGES = report_count_ranges(config["report"]["count_ranges"], len(SHARDS))
REPORT_SAMPLE_SIZE = 10  # documents in the page's sample section


# A job per shard: its counts, its 10-gram hashes by hash range, its part of the resemblance
# sample; it holds the shard (its tokens, blocks and 10-grams: 4 times the files' size).
rule corpus_stats_shard:
    input:
        unpack(corpus_stats_shard_inputs),
    output:
        totals=FILES.report_totals,
        ngrams=temp(FILES.report_ngrams),
        sample=FILES.report_sample,
    log:
        "logs/report/corpus_stats_shard/{shard}.log",
    conda:
        "../envs/evaluate.yaml"
    threads: 1
    resources:
        mem_mb=lambda wildcards, input: 1000
        + 4 * files_mb([input.tokens, input.blocks]),
    params:
        ranges=REPORT_RANGES,
        similarity=config["similarity"],
        sample_size=config["report"]["resemblance_sample"],
    script:
        "../scripts/corpus_stats_shard.py"


# A job per hash range: its range of every shard's 10-gram hashes (collected in one folder,
# rules/collect.smk), counted (16 B a token of its range on disk, before and after block dedup;
# 70 B held while counted).
collection(
    "report_collect_ngrams",
    FILES.report_collected_ngrams,
    ngrams=expand(FILES.report_ngrams, shard=SHARDS),
)


rule corpus_stats_range:
    input:
        ngrams=collected("report_collect_ngrams", "ngrams"),
    output:
        counts=FILES.report_range_counts,
    log:
        "logs/report/corpus_stats_range/{part}.log",
    conda:
        "../envs/evaluate.yaml"
    threads: 1
    resources:
        mem_mb=lambda wildcards, input: 1000
        + 5 * (collected_bytes(input.ngrams, "ngrams") >> 20) // REPORT_RANGES,
    params:
        ranges=REPORT_RANGES,
    script:
        "../scripts/corpus_stats_range.py"


# The merge: the shards' counts, the ranges' counts and the resemblance sample (about
# report.resemblance_sample documents' signatures, 1 KB each), never a shard's data.
rule corpus_stats:
    input:
        **REPORT_DEDUP_STATS,
        funnel=FILES.funnel,
        totals=expand(FILES.report_totals, shard=SHARDS),
        counts=expand(FILES.report_range_counts, part=range(REPORT_RANGES)),
        sample=expand(FILES.report_sample, shard=SHARDS),
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
        mem_mb=lambda wildcards, input: 1000 + 3 * input.size_mb,
    params:
        similarity=config["similarity"],
        sample_size=config["report"]["resemblance_sample"],
        benchmarks=lambda wildcards: {
            rule.name: str(rule.benchmark) for rule in workflow.rules if rule.benchmark
        },
    script:
        "../scripts/corpus_stats.py"


# A job per shard: what the page shows of its documents (languages and lengths, its candidates
# for the sample section, its quality sums, examples and sample of signals); it holds the shard's
# stage tables, one at a time.
rule report_shard:
    input:
        unpack(shard_table_inputs),
    output:
        summary=FILES.report_shard_summary,
    log:
        "logs/report/report_shard/{shard}.log",
    conda:
        "../envs/evaluate.yaml"
    threads: 1
    resources:
        # 35 times its tables' size held on the dev crawl (the blocks' text, read whole)
        mem_mb=lambda wildcards, input: 1000 + 40 * input.size_mb,
    params:
        sample_size=REPORT_SAMPLE_SIZE,
    script:
        "../scripts/report_shard.py"


# The shards' page summaries merged in shard order, no job reading more than 64
# (report.summary.SUMMARIES_PER_MERGE; 0.12 CPU s each): up to 64 shards, one job; past them, a
# tree of merge jobs (report.summary.merge_tree: 459, then 8, at 10^12 words) and the last merge
# of its top level's files. Each holds two summaries at a time (the sample's candidates, 10,000
# documents' quality signals). No benchmark, as report_shard: light, and corpus_stats, which
# globs the benchmarks for the stage times, does not wait for them. Their inputs:
# summary_group_inputs and summary_files (rules/common.smk).
rule report_summary_group:
    input:
        summaries=summary_group_inputs,
    output:
        summary=temp(FILES.report_summary_group),
    log:
        "logs/report/report_summary_group/{level}-{group}.log",
    wildcard_constraints:
        level="[1-9][0-9]*",
        group="[0-9]+",
    conda:
        "../envs/evaluate.yaml"
    threads: 1
    resources:
        mem_mb=1000,
    params:
        sample_size=REPORT_SAMPLE_SIZE,
    script:
        "../scripts/report_summary.py"


rule report_summary:
    input:
        summaries=summary_files(
            len(REPORT_SUMMARY_FILES) - 1, range(REPORT_SUMMARY_FILES[-1])
        ),
    output:
        summary=FILES.report_summary,
    log:
        "logs/report/report_summary.log",
    conda:
        "../envs/evaluate.yaml"
    threads: 1
    resources:
        mem_mb=1000,
    params:
        sample_size=REPORT_SAMPLE_SIZE,
    script:
        "../scripts/report_summary.py"


# The page, from small files only: the measurements' and the page summary.
rule report:
    input:
        **rules.corpus_stats.output,
        **(REPORT_EVALUATION if REPORT_WITH_EVALUATION else {}),
        skipped=FILES.skipped,
        page=FILES.report_summary,
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
        sample_size=REPORT_SAMPLE_SIZE,
    script:
        "../scripts/report.py"
