"""benchmarks/studies/taboo_vocab.py's figures, worked by hand: top-1 / top-10 per side and
the paired differences against a base reading; the sense texts beside the glossed index.
No ``../shared``."""

from __future__ import annotations

from benchmarks.studies.taboo_vocab import SENSES, figures, first_sense_free_texts
from leakage.backends.answers import sense_texts
from leakage.vocab import gloss_text

ITEMS = [
    {"side": "dev", "instance": "a"},
    {"side": "dev", "instance": "b"},
    {"side": "frozen", "instance": "c"},
    {"side": "frozen", "instance": "c"},
]


def test_figures_and_their_paired_differences_by_hand() -> None:
    ranks = [1, 20, 5, 1]
    base = [3, 20, 12, 1]
    out = figures(ITEMS, ranks, base)
    dev, frozen, both = out["dev"], out["frozen"], out["all"]
    assert (dev["clues"], dev["instances"], frozen["instances"]) == (2, 2, 1)
    assert dev["top1"] == 0.5 and dev["top10"] == 0.5 and dev["median_rank"] == 10.5
    assert frozen["top1"] == 0.5 and frozen["top10"] == 1.0
    # dev: rank 1 against 3 is +1 at top-1 and 0 at top-10; 20 against 20 is 0
    assert dev["top1_vs_base"] == 0.5 and dev["top10_vs_base"] == 0.0
    # frozen: 5 against 12 is +1 at top-10; 1 against 1 is 0
    assert frozen["top1_vs_base"] == 0.0 and frozen["top10_vs_base"] == 0.5
    assert both["top1_vs_base"] == 0.25 and both["top10_vs_base"] == 0.25
    # one frozen instance: every resample is the same, so its interval is a point
    assert frozen["top10_vs_base_ci"] == [0.5, 0.5]
    assert "top1_vs_base" not in figures(ITEMS, ranks)["dev"]


def test_the_sense_texts_leave_out_the_gloss_the_index_holds() -> None:
    texts, owner = first_sense_free_texts(["bass", "Qwzxv"])
    assert gloss_text("bass") not in texts  # the first sense: the glossed index's own text
    assert texts == [t for t in sense_texts("bass", SENSES) if t != gloss_text("bass")]
    assert len(texts) == SENSES - 1 and set(owner.tolist()) == {0}  # no sense of Qwzxv
