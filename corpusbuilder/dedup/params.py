"""Block de-duplication's settings (config section `dedup`), with the thesis' defaults."""

from __future__ import annotations

from dataclasses import dataclass

from corpusbuilder.config import dataclass_values
from corpusbuilder.ngrams.hashing import NGRAM_KINDS

LEVELS = ("block", "document", "sentence", "span")
PART_LEVELS = ("sentence", "span")  # blocks, and the parts of a block in the band
ORDERS = ("dup-share", "input")
BACKENDS = ("sorted-array", "judy")
# one job, Algorithm 3.1 (the thesis); or jobs per hash range and per shard (`partitioned`)
MODES = ("sequential", "partitioned")
# no document known: an n-gram nobody has sent to output yet, a quoted n-gram whose sender is
# looked up among G_out's owners later, a duplicate unit nothing is resolved to
NO_DOCUMENT = -1


@dataclass(frozen=True)
class DedupParams:
    """Block de-duplication settings (config section `dedup`); defaults are the thesis'."""

    n: int = 10  # n-gram length; must match G₂₊ (§3.6.4, Table 3.4: 10-grams are the safe choice)
    kind: str = "all"  # tokens the n-grams are built from, Table 3.3; must match G₂₊
    threshold: float = 0.5  # §3.6.4: a unit with more than this share of duplicate words goes
    # §3.5.2: judge text blocks ("block") or whole documents ("document"); beyond the thesis,
    # blocks and the parts of a block whose share lies in (partial_low, partial_high]: its
    # sentences ("sentence") or the spans no fresh n-gram covers ("span")
    level: str = "block"
    partial_low: float = (
        0.0  # sentence and span modes: a block at most this covered is judged whole
    )
    partial_high: float = 1.0  # sentence and span modes: a block more than this covered goes whole
    # span mode: a kept run of words goes when its output n-grams outnumber its fresh ones by more
    # than this to one (measured on the dev crawl, docs/measurements.md: 0.25
    # removes 99.2 % and keeps 99.6 %)
    span_repeat_ratio: float = 0.25
    order: str = "dup-share"  # §3.5: documents with the least duplicate content first; or "input"
    backend: str = "sorted-array"  # storage of G₂₊/G_out: "sorted-array" or "judy" (§3.5.1)
    hash_bits: int = 64  # n-gram hash width kept (§3.5.1: 56 bits are cheaper in Judy, Fig. 3.4)
    # tokens of one processing bucket (bounds the spilled pages mapped at once, not results)
    bucket_tokens: int = 50_000_000

    def __post_init__(self) -> None:
        for name, value, allowed in (
            ("kind", self.kind, NGRAM_KINDS),
            ("level", self.level, LEVELS),
            ("order", self.order, ORDERS),
            ("backend", self.backend, BACKENDS),
        ):
            if value not in allowed:
                raise ValueError(f"dedup {name} must be one of {', '.join(allowed)}, not {value!r}")
        if not 0 <= self.threshold <= 1:
            raise ValueError(f"dedup threshold must lie in [0, 1], not {self.threshold}")
        if not 0 <= self.partial_low <= self.partial_high <= 1:
            raise ValueError(
                f"dedup partial_low and partial_high must satisfy 0 <= low <= high <= 1, not "
                f"{self.partial_low}, {self.partial_high}"
            )
        if not 16 <= self.hash_bits <= 64:
            raise ValueError(f"dedup hash_bits must lie in 16..64, not {self.hash_bits}")

    @property
    def partial_band(self) -> tuple[float, float]:
        return self.partial_low, self.partial_high

    @classmethod
    def from_config(cls, section: dict) -> DedupParams:
        """From the validated `dedup` config section (its n-gram length is the key `ngram`)."""
        return cls(**dataclass_values(cls, section, renamed={"n": "ngram"}))
