"""Research studies: questions about the ensemble and its fits, asked on reference data, apart
from the speed and quality benchmarks users run (``python -m benchmarks``).

Each study is run as a module, ``python -m benchmarks.studies.NAME [options]``, and writes
``benchmarks/results/<name>.json`` as the benchmarks do (docs/benchmarks.md has each one's
command, figures and conclusion). They need ``../shared/data`` and skip, saying so, without it.

- ``chameleon_cards``: sentence clues on a Chameleon card: issue 30's dev data, the frozen
  split, the per-member and ensemble baseline, and the ``sentence_card`` fit it writes;
- ``pooling_variants``: other forms of the pool than the log-linear one, on the same items;
- ``definition_member``: a member that reads WordNet definitions of the candidates;
- ``word_cards``: several human one-word hints for one secret on a card;
- ``category_cards``: the word fit refitted on WordNet category cards;
- ``answers``: clembench guesswhat's yes/no answers read by each member and the ``answers``
  member, and the ``question_answer`` fit it writes;
- ``taboo_vocab``: clembench taboo first clues over the open vocabulary, bare and glossed;
- ``seats``: SpyGame / Undercover posteriors from each player's own seat (the spy's, a
  civilian voter's) and the outside seats, and the pair prior it writes.

Helpers they share with each other or with the benchmarks live in ``benchmarks.common``;
``_wordnet`` (WordNet read as the studies need it) is theirs alone.
"""

STUDIES = (
    "chameleon_cards",
    "pooling_variants",
    "definition_member",
    "word_cards",
    "category_cards",
    "answers",
    "taboo_vocab",
    "seats",
)

__all__ = ["STUDIES"]
