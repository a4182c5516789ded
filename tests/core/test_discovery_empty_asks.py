"""The loop stops proposing only when its strategy has found nothing new several asks in a row:
one empty ask (MCTS's 400 rollouts all dead ends or old operators) is not the end of a run."""

from __future__ import annotations

from core.ir.serialize import read_document
from core.search.driver import make_strategy
from core.search.loop import EMPTY_ASKS, Loop
from core.search.settings import DiscoveryConfig
from core.search.stages import Phase
from core.search.summary import summarize
from core.store import Store
from core.store.searches import open_run
from tests.support import EXAMPLES


def loop_with(store: Store, empty: int) -> Loop:
    """A loop whose strategy (Canvas's sampler) answers its first `empty` asks with nothing."""
    cfg = DiscoveryConfig.from_dict(
        {"template": read_document(EXAMPLES / "conv2d.json"), "strategy": "canvas", "samples": 3, "tune": False}
    )
    strategy = make_strategy(cfg)
    asks, told = strategy.ask, []
    strategy.ask = lambda n: [] if told.append(n) or len(told) <= empty else asks(n)
    return Loop(store, cfg, strategy, open_run(store, cfg.key, "run", {}))


def test_a_few_empty_asks_do_not_end_the_run(tmp_path):
    with Store(tmp_path / "d.db") as store:
        loop = loop_with(store, EMPTY_ASKS - 1)
        for _ in range(EMPTY_ASKS - 1):
            loop.refill(3)
            assert not loop.exhausted and not loop.jobs
        loop.refill(3)
        assert not loop.exhausted and len(loop.jobs) == 2  # in flight: the default 2
        assert summarize(store, loop.run, loop.cfg, Phase.PROPOSING, exhausted=loop.exhausted).exhausted is False


def test_empty_asks_in_a_row_stop_the_proposals(tmp_path):
    with Store(tmp_path / "d.db") as store:
        loop = loop_with(store, EMPTY_ASKS)
        for _ in range(EMPTY_ASKS):
            loop.refill(3)
        assert loop.exhausted and not loop.jobs
        assert summarize(store, loop.run, loop.cfg, Phase.FINISHING, exhausted=loop.exhausted).exhausted is True
