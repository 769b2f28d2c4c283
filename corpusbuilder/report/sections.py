"""The sections of ``results/report.html``, one function each, from the files the workflow's
measuring rules write:

1. headline numbers (``summary.json``);
2. the funnel (``funnel_full.tsv``, thesis Tables 3.8/3.9) as a bar chart and a table, with the
   reasons documents were lost (``skipped.tsv``);
3. documents and words per language, and the corpus's document lengths (the page summary:
   `summary`, the stage tables summed up a shard at a time);
4. duplicate content before and after block de-duplication (``duplicates.tsv``, Table 3.4);
5. boilerplate quality on the gold sets (``boilerplate.tsv``, ``fragmentation.tsv``,
   ``sweep.png``) — each only if the file exists, since the gold sets may be absent;
6. time and memory per stage (``stage_times.tsv``, Table 3.7);
7. a sample of documents with every block in page order (`samples`, from the page summary).

Every input but the four corpus-stats files is optional: a missing one leaves its section out
(or says that it is missing), so the page always renders.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from corpusbuilder.report.joins import BLOCK_KINDS, existing, language_table
from corpusbuilder.report.rendering import (
    CORPUS_LABELS,
    STAGE_LABELS,
    Column,
    duplicates_chart,
    esc,
    figure_html,
    file_data_uri,
    format_number,
    funnel_chart,
    html_table,
    length_chart,
    section_html,
    stage_chart,
)
from corpusbuilder.report.samples import CANDIDATE_COLUMNS, document_html, sample_documents

if TYPE_CHECKING:
    import pandas as pd

# --- inputs ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReportFiles:
    funnel_full: Path
    duplicates: Path
    stage_times: Path
    summary: Path
    page_summary: Path | None = None  # `summary`'s, of every shard
    skipped: Path | None = None
    boilerplate: Path | None = None
    boilerplate_languages: Path | None = None
    fragmentation: Path | None = None
    sweep_png: Path | None = None
    site_boilerplate: Path | None = None


def _read_tsv(path: Path | str | None) -> pd.DataFrame | None:
    import pandas as pd

    path = existing(path)
    if path is None:
        return None
    return pd.read_csv(path, sep="\t", keep_default_na=True)


# --- tables ------------------------------------------------------------------------------------

LANGUAGE_COLUMNS = [
    Column("language", "language"),
    Column("identified", "documents identified", "int"),
    Column("kept_by_filter", "kept by the language filter", "int"),
    Column("in_corpus", "documents in the corpus", "int"),
    Column("words", "words in the corpus", "int"),
]
FUNNEL_COLUMNS = [
    Column("label", "stage"),
    Column("documents", "documents", "int"),
    Column("pct_of_previous_documents", "% of previous", "pct", 1),
    Column("words", "words", "int"),
    Column("pct_of_previous_words", "% of previous", "pct", 1),
    Column("tokens", "tokens", "int"),
]
CAPTION = (
    '10-gram occurrences; "duplicate": occurrences of the 10-grams seen 2+ times, "distinct '
    'duplicate": those 10-gram types'
)
DUPLICATE_COLUMNS = [
    Column("label", "corpus"),
    Column("documents", "documents", "int"),
    Column("blocks", "blocks", "int"),
    Column("tokens", "tokens", "int"),
    Column("ngram_instances", "10-grams", "int"),
    Column("distinct_ngrams", "distinct 10-grams", "int"),
    Column("duplicate_instances", "duplicate", "int"),
    Column("distinct_duplicates", "distinct duplicate", "int"),
    Column("pct_duplicate_instances", "duplicate %", "pct"),
    Column("pct_of_before", "dup. % of before", "pct"),
]
BOILERPLATE_COLUMNS = [
    Column("extractor", "extractor"),
    Column("dataset", "dataset"),
    Column("pages", "pages", "int"),
    Column("word_precision", "word P", "score"),
    Column("word_recall", "word R", "score"),
    Column("word_f1", "word F1", "score"),
    Column("word_f05", "word F0.5", "score"),
    Column("bow_precision", "BoW P", "score"),
    Column("bow_recall", "BoW R", "score"),
    Column("bow_f1", "BoW F1", "score"),
    Column("bow_f05", "BoW F0.5", "score"),
    Column("snippet_precision", "snippet P", "score"),
    Column("snippet_recall", "snippet R", "score"),
    Column("snippet_f1", "snippet F1", "score"),
    Column("pages_per_second", "pages/s", "float", 1),
]
FRAGMENTATION_COLUMNS = [
    Column("extractor", "extractor"),
    Column("dataset", "dataset"),
    Column("documents", "documents", "int"),
    Column("fragments", "fragments", "int"),
    Column("mean_fragment_chars", "mean chars", "float", 1),
    Column("median_fragment_chars", "median chars", "float", 1),
    Column("fragments_per_document", "fragments / document", "float"),
]
SITE_COLUMNS = [
    Column("dataset", "dataset"),
    Column("scope", "pages"),
    Column("variant", "blocks kept"),
    Column("pages", "pages", "int"),
    Column("hosts", "hosts", "int"),
    Column("marked_blocks", "marked", "int"),
    Column("word_precision", "word P", "score"),
    Column("word_recall", "word R", "score"),
    Column("word_f1", "word F1", "score"),
    Column("bow_f1", "BoW F1", "score"),
    Column("snippet_f1", "snippet F1", "score"),
]
STAGE_COLUMNS = [
    Column("rule", "rule"),
    Column("phase", "phase (thesis Table 3.7)"),
    Column("jobs", "jobs", "int"),
    Column("seconds", "wall s", "float", 1),
    Column("cpu_seconds", "CPU s", "float", 1),
    Column("max_rss_mb", "peak RSS MB", "float", 0),
    Column("pct_of_total_seconds", "% of time", "pct", 1),
]


def _with_main_f1(scores: pd.DataFrame) -> pd.DataFrame:
    """The rows with column ``f1``: bag-of-words F1, or snippet F1 where the set lists snippets."""
    return scores.assign(f1=scores["bow_f1"].fillna(scores["snippet_f1"]))


def main_content_overview(boilerplate: pd.DataFrame) -> pd.DataFrame:
    """One row per extractor: its main-content F1 on each gold set (bag of words, or snippets where
    the set has snippets), their mean over the sets, and pages/s over all of them; best mean
    first."""
    per_set = _with_main_f1(boilerplate[boilerplate["dataset"] != "all"])
    table = per_set.pivot(index="extractor", columns="dataset", values="f1")
    table["mean"] = table.mean(axis=1, skipna=False)
    seconds = per_set.groupby("extractor")[["pages", "seconds"]].sum()
    table["pages/s"] = seconds["pages"] / seconds["seconds"]
    return table.sort_values("mean", ascending=False).reset_index()


def main_content_by_language(languages: pd.DataFrame) -> pd.DataFrame:
    """Per gold set that holds pages of several languages, one row per (set, page language): its
    pages and each extractor's main-content F1 on them, extractors in the order of their mean."""
    import pandas as pd

    languages = _with_main_f1(languages)
    multilingual = languages.groupby("dataset")["language"].nunique()
    languages = languages[languages["dataset"].isin(multilingual[multilingual > 1].index)]
    table = languages.pivot_table(index=["dataset", "language"], columns="extractor", values="f1")
    table = table[table.mean().sort_values(ascending=False).index]
    pages = languages.groupby(["dataset", "language"])["pages"].max().rename("pages")
    return (
        pd.concat([pages, table], axis=1)
        .reset_index()
        .sort_values(["dataset", "pages"], ascending=[True, False])
    )


# --- sections ----------------------------------------------------------------------------------


def cards_html(summary: dict) -> str:
    """The headline numbers of ``summary.json``, one card each."""
    items = []

    def card(value, label):
        items.append(
            f'<div class="card"><div class="value">{value}</div><div '
            f'class="label">{esc(label)}</div></div>'
        )

    card(format_number(summary.get("records")), "WARC records read")
    card(format_number(summary.get("html_documents")), "HTML pages cleaned")
    card(format_number(summary.get("documents_final")), "documents in the corpus")
    card(format_number(summary.get("words_final")), "words in the corpus")
    if summary.get("pct_words_kept_of_original") is not None:
        card(f"{summary['pct_words_kept_of_original']:.1f} %", "of the original words kept")
    if summary.get("pct_boilerplate_words") is not None:
        card(f"{summary['pct_boilerplate_words']:.1f} %", "of the words were boilerplate")
    if summary.get("pct_duplicate_ngrams_left") is not None:
        card(
            f"{summary['pct_duplicate_ngrams_left']:.1f} %",
            "of duplicate 10-grams left after block dedup",
        )
    if summary.get("wall_seconds_total") is not None:
        card(f"{summary['wall_seconds_total']:,.1f} s", "summed wall time of the measured stages")
    return f'<div class="cards">{"".join(items)}</div>' + provenance_html(
        summary.get("provenance") or {}
    )


def provenance_html(record: dict) -> str:
    """What built the corpus (``provenance.json``), one line under the cards, and a warning for
    each library a rule's files were written with in more than one version: shards from runs
    apart. A record from before the tables named their writers says what wrote the record."""
    writers = [
        entry["written_by"]
        for entries in (record.get("stages") or {}).values()
        for entry in entries
        if isinstance(entry, dict) and isinstance(entry.get("written_by"), dict)
    ] or ([record] if record.get("corpusbuilder") else [])
    if not writers:
        return ""

    def versions(key: str) -> str:
        return _listed(sorted({str(writer.get(key)) for writer in writers if writer.get(key)}))

    built = f"Built by corpusbuilder {versions('corpusbuilder')}"
    if versions("commit"):
        built += f" at commit {versions('commit')}"
    built += f", Python {versions('python')}"
    model = record.get("model")
    if isinstance(model, dict) and model.get("sha256"):
        built += f"; block classifier sha256 {str(model['sha256'])[:16]}…"
    lines = [f'<p class="note">{esc(built)} (results/stats/provenance.json).</p>']
    for rule, libraries in (record.get("mixed_versions") or {}).items():
        if not isinstance(libraries, dict):
            continue  # a record of 29ff607, whose mixed versions were not per rule
        for name, found in libraries.items():
            rerun = f"<code>snakemake --cores N -R {esc(rule)}</code>"
            lines.append(
                f'<p class="note warn"><b>Mixed versions:</b> the files of rule {esc(rule)} '
                f"were written with {esc(name)} {esc(_listed(found))}: shards (or hash ranges) "
                f"from runs apart (which: provenance.json). {rerun} makes them one.</p>"
            )
    return "".join(lines)


def _listed(items: list[str]) -> str:
    return " and ".join(filter(None, [", ".join(items[:-1]), *items[-1:]]))


def _best_per_dataset(table: pd.DataFrame, column: str) -> set[tuple[int, str]]:
    import pandas as pd

    if column not in table or table[column].isna().all():
        return set()
    best = set()
    for _, group in table.reset_index(drop=True).groupby("dataset"):
        values = pd.to_numeric(group[column], errors="coerce")
        if values.notna().any():
            best.add((int(values.idxmax()), column))
    return best


def funnel_section(files: ReportFiles) -> str:
    """The funnel: documents and words after each step, and why documents were lost."""
    funnel = _read_tsv(files.funnel_full)
    if funnel is None or not len(funnel):
        return ""
    funnel = funnel.assign(label=[STAGE_LABELS.get(s, s) for s in funnel["stage"]])
    classes = ["final" if i == len(funnel) - 1 else "" for i in range(len(funnel))]
    body = (
        '<p class="lead">Documents and words left after each step, as thesis Tables 3.8/3.9 '
        "report a corpus; each percentage is of the row before. Words are whitespace-separated "
        "strings; tokens are counted once the text is tokenised.</p>"
    )
    body += (
        '<p class="note">What to look for: the step that loses the most. A big loss to "html '
        'documents" is the crawl (non-HTML, errors — see why below); to "good text", pages '
        "whose language has no stop list or extractor settings too strict; to exact dedup, a crawl "
        "with many mirrors.</p>"
    )
    body += figure_html(funnel_chart(funnel), "funnel chart") + html_table(
        funnel, FUNNEL_COLUMNS, row_classes=classes
    )
    skipped = _read_tsv(files.skipped)
    if skipped is not None and len(skipped):
        skipped = skipped.assign(stage=[STAGE_LABELS.get(s, s) for s in skipped["stage"]])
        body += "<h3>Why documents were lost</h3>" + html_table(
            skipped,
            [
                Column("stage", "lost at the step to"),
                Column("reason", "reason"),
                Column("count", "documents", "int"),
            ],
        )
    return section_html("funnel", "Funnel", body)


def resemblance_sample_note(sample: dict) -> str:
    """How the resemblance row was measured (summary.json's ``resemblance_sample``)."""
    if sample["share_of_10gram_types"] >= 1:
        return (
            "The resemblance row is the whole computation: the corpus holds no more 10-grams than "
            "report.resemblance_sample."
        )
    types, documents, removed = (
        format_number(sample[key])
        for key in ("sampled_types", "sampled_documents", "removed_sampled_documents")
    )
    return (
        "The resemblance row is estimated from a sample: the 10-gram types whose hash falls in "
        f"{100 * sample['share_of_10gram_types']:.3g} % of the hash space ({types} types, every "
        f"occurrence of each), the {documents} documents holding them paired ({removed} "
        f"removed); duplicate 10-grams left {sample['pct_duplicate_ngrams_left']:.2f} % "
        f"± {sample['standard_error_points']:.2f} (one standard error)."
    )


def duplicates_section(files: ReportFiles, summary: dict) -> str:
    """Duplicate content before and after de-duplication (thesis Table 3.4) and the facts of the
    pass."""
    duplicates = _read_tsv(files.duplicates)
    if duplicates is None or not len(duplicates):
        return ""
    duplicates = duplicates.assign(label=[CORPUS_LABELS.get(c, c) for c in duplicates["corpus"]])
    n = summary["measure_ngram"]
    body = (
        f'<p class="lead">Duplicate content measured as in thesis Table 3.4: {n}-grams of all '
        "tokens within blocks; a duplicate n-gram occurs twice or more in that corpus, and each "
        'of its occurrences is counted. "Before" is the exactly de-duplicated corpus (every '
        'tokenised block), "after block dedup" only the blocks kept by block de-duplication, '
        '"after resemblance dedup" the thesis\' document-level comparison ("rsmbl. de-dupl"): one '
        "document kept per cluster of min-hash resemblance above similarity.dedup_threshold "
        "(thesis: 0.9), all of its blocks.</p>"
    )
    body += (
        '<p class="note">What to look for: the bar after block dedup should be a small fraction '
        "of the one before; if resemblance dedup leaves much more, the duplicates are parts of "
        "pages (quotes, boilerplate) that whole-document comparison cannot remove.</p>"
    )
    body += figure_html(duplicates_chart(duplicates), "duplicate 10-grams chart")
    body += (
        f'<div class="scroll">{html_table(duplicates, DUPLICATE_COLUMNS, caption=CAPTION)}</div>'
    )
    dedup = summary.get("dedup") or {}
    facts = []
    if dedup.get("duplicate_ngrams_used") is not None:
        params = dedup.get("params") or {}
        facts.append(
            f"{format_number(dedup['duplicate_ngrams_used'])} distinct duplicate "
            f"{params.get('n', '')}-grams ({esc(params.get('kind', ''))} tokens) were used for "
            f"de-duplication, stored in {format_number(dedup.get('store_bytes'))} bytes; threshold "
            f"{params.get('threshold', '')}, order {esc(params.get('order', ''))}."
        )
    sample = summary.get("resemblance_sample")
    if sample:
        facts.append(resemblance_sample_note(sample))
    if summary.get("blocks_per_document_before") is not None:
        facts.append(
            f"Fragmentation: {summary['blocks_per_document_before']:.2f} text blocks per document "
            f"before block de-duplication, {summary.get('blocks_per_document_after') or 0:.2f} "
            "after (thesis: 3.56 → 3.85)."
        )
    body += "".join(f'<p class="note">{fact}</p>' for fact in facts)
    return section_html("duplicates", "Duplicate content", body)


def boilerplate_section(files: ReportFiles) -> str:
    """The gold-set evaluation: scores, fragmentation, site-level boilerplate, the sweep."""
    boilerplate, fragmentation = _read_tsv(files.boilerplate), _read_tsv(files.fragmentation)
    sweep = existing(files.sweep_png)
    body = (
        '<p class="lead">jusText and the baselines on the human-annotated gold sets (thesis §2.9): '
        "word-level precision, recall and F-scores on aligned text, bag-of-words scores, and "
        "snippet scores where the gold set lists snippets. Best word F1 per dataset in bold.</p>"
    )
    if boilerplate is not None and len(boilerplate):
        shown = [
            c
            for c in BOILERPLATE_COLUMNS
            if c.kind == "text" or c.key not in boilerplate or boilerplate[c.key].notna().any()
        ]
        overview = main_content_overview(boilerplate)
        columns = [
            Column("extractor", "extractor"),
            *(Column(c, c, "score") for c in overview.columns if c not in ("extractor", "pages/s")),
            Column("pages/s", "pages/s", "float", 1),
        ]
        body += (
            '<h3>Main-content F1 by gold set</h3><p class="note">Bag-of-words F1 over lower-cased '
            "whitespace tokens (snippet F1 where the set lists snippets), micro-averaged over each "
            'set\'s pages. "best", the learned preset, is scored leave-one-source-out: on each set '
            "by a model trained without that set's source (CleanEval dev + final and msv-big9 + "
            "msv-chaos count as one source each), so its row says what to expect on pages of a "
            'site it never saw. "best-adapted" is that held-out model after self-training on the '
            "set's own pages (its confident labels of them, never their gold labels), as "
            "adapt.enabled does to a crawl. Look at the mean, and at the sets where a peer beats "
            "it.</p>"
            f'<div class="scroll">{html_table(overview, columns)}</div>'
        )
        body += _languages_table(_read_tsv(files.boilerplate_languages))
        body += "<h3>All measures</h3>"
        bold = _best_per_dataset(boilerplate, "word_f1")
        body += f'<div class="scroll">{html_table(boilerplate, shown, bold=bold)}</div>'
    else:
        body += (
            '<p class="missing">No gold-set evaluation in this run '
            "(results/stats/boilerplate.tsv is absent).</p>"
        )
    if fragmentation is not None and len(fragmentation):
        body += "<h3>Fragmentation (thesis Table 2.11)</h3>" + html_table(
            fragmentation, FRAGMENTATION_COLUMNS
        )
    site = _read_tsv(files.site_boilerplate)
    if site is not None and len(site):
        shown = [c for c in SITE_COLUMNS if c.kind == "text" or site[c.key].notna().any()]
        body += (
            "<h3>Site-level boilerplate (Ikeda et al.) with jusText</h3>"
            '<p class="note">Gold pages grouped by host; blocks mostly covered by the n-grams '
            "frequent across a host's pages are marked. justext+site: marked blocks enter the "
            "context-sensitive pass as bad (mode combine); justext-minus-site: removed after it; "
            'site-only: every block but the marked ones. "multi-page hosts": the pages the marks '
            "can change.</p>"
            f'<div class="scroll">{html_table(site, shown)}</div>'
        )
    if sweep is not None:
        body += (
            "<h3>Parameter sweep (thesis Fig. 2.7 in small)</h3>"
            '<p class="note">Word-level precision and recall as one jusText threshold at a time '
            "moves away from the default (grey line).</p>"
            + figure_html(file_data_uri(sweep), "parameter sweep")
        )
    return section_html("boilerplate", "Boilerplate removal quality", body)


def _languages_table(languages: pd.DataFrame | None) -> str:
    if languages is None or not len(languages):
        return ""
    table = main_content_by_language(languages)
    if not len(table):
        return ""
    columns = [
        Column("dataset", "gold set"),
        Column("language", "page language"),
        Column("pages", "pages", "int"),
        *(
            Column(c, c, "score")
            for c in table.columns
            if c not in ("dataset", "language", "pages")
        ),
    ]
    return (
        '<h3>Main-content F1 by page language</h3><p class="note">The multilingual gold sets split '
        "by the language the extract stage guesses for each page (it picks the stop list). Look "
        "for a language where an extractor falls well below its own mean: few pages make a noisy "
        "cell.</p>"
        f'<div class="scroll">{html_table(table, columns)}</div>'
    )


def stages_section(files: ReportFiles) -> str:
    """Time and memory per rule, from Snakemake's benchmark files (thesis Table 3.7)."""
    import pandas as pd

    stages = _read_tsv(files.stage_times)
    if stages is not None and len(stages):
        total = pd.DataFrame(
            [
                {
                    "rule": "total",
                    "phase": "",
                    "jobs": stages["jobs"].sum(),
                    "seconds": stages["seconds"].sum(),
                    "cpu_seconds": stages["cpu_seconds"].sum(),
                    "max_rss_mb": stages["max_rss_mb"].max(),
                    "pct_of_total_seconds": 100.0,
                }
            ]
        )
        body = (
            '<p class="lead">Wall and CPU time from Snakemake\'s benchmark files, summed over '
            "each rule's jobs (per-shard rules run one job per shard, in parallel); peak memory is "
            "the largest resident set of any one job (thesis Table 3.7).</p>"
        )
        body += (
            '<p class="note">What to look for: the rule that dominates wall time is the one to '
            "give more cores (per-shard rules) or a bigger node (dedup holds the duplicate "
            "n-grams); a peak memory near a rule's mem_mb is a job a larger crawl will run out of "
            "memory in.</p>"
        )
        body += figure_html(stage_chart(stages), "stage times chart")
        body += html_table(
            pd.concat([stages, total], ignore_index=True),
            STAGE_COLUMNS,
            row_classes=[""] * len(stages) + ["total"],
        )
        return section_html("stages", "Time and memory per stage", body)
    return section_html(
        "stages",
        "Time and memory per stage",
        '<p class="missing">No benchmark files were found.</p>',
    )


def languages_section(page: dict) -> str:
    """Documents and words per language through the language filter into the corpus, and how long
    the corpus's documents are (``page``: the corpus's `summary`)."""
    table = language_table(page.get("languages") or {})
    if not len(table):
        return ""
    body = (
        '<p class="lead">Documents per language as the language stage identified them, kept by its '
        "filter, and left in the corpus after de-duplication, with their words.</p>"
        f'<div class="scroll">{html_table(table, LANGUAGE_COLUMNS)}</div>'
    )
    if page["lengths"]["documents"]:
        body += (
            '<h3>Document lengths</h3><p class="note">What to look for: a corpus of articles has '
            "most documents between 100 and 2,000 words; a tall first bar means many pages kept "
            "only a stub — look at them in the sample below before building on them.</p>"
            + figure_html(length_chart(page["lengths"]["bins"]), "document length histogram")
        )
    return section_html("languages", "Languages and lengths", body)


def sample_section(page: dict, sample_size: int) -> str:
    """A few documents, every block coloured by what happened to it."""
    import pandas as pd

    candidates = pd.DataFrame(page.get("candidates") or [], columns=CANDIDATE_COLUMNS)
    documents = sample_documents(candidates, page.get("documents") or [], sample_size)
    legend = "".join(
        f'<span><span class="sw {k}"></span>{esc(label)}</span>' for k, label in BLOCK_KINDS.items()
    )
    body = (
        '<p class="lead">Every block of a few documents, in page order, coloured by what happened '
        "to it. Hover over a removed block for the reason; a duplicate block names the kept "
        "document whose text it copies.</p>"
    )
    body += f'<div class="legend">{legend}</div>'
    body += (
        "".join(document_html(d) for d in documents)
        or '<p class="missing">No cleaned documents.</p>'
    )
    return section_html("sample", "Sample documents", body)
