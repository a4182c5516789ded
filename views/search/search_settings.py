"""The Search page's settings. Two modes: Discover runs the discovery loop (propose, screen
with Fisher Potential, proxy-train, keep what is within the accuracy margin, time it tuned
end to end), with the proxy task, the stages, the deployment size and the time budget
settable and `tessera discover`'s defaults; Propose only runs a plain search job that fills
the store with candidates. Both share what to search: strategy, template and budgets.

The widgets only hold values: the configurations are built and checked by core
(core.search.settings: DiscoveryConfig.of, SearchConfig), so the window and the command line
make the same run from the same settings; `restore` puts a run's settings back (the Search page
opens with the last run's, so that the same settings resume it)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from core.ir.serialize import read_document
from core.search.settings import DiscoveryConfig, SearchConfig
from core.search.strategies import EVALUATIONS, STRATEGIES
from core.train.paired import SEEDS
from core.train.sequential import DEFAULT_RULE
from core.train.settings import FISHER_THRESHOLD
from resources import EXAMPLES

from ..evaluation_forms import DeploymentForm, ProxyTaskForm, form_of, number, whole

DISCOVER, PROPOSE = "discover", "propose"
MODE_LABELS = {
    DISCOVER: "Discover: screen, train and time candidates (the loop)",
    PROPOSE: "Propose only: candidates into the store",
}


class SearchSettings(QWidget):
    changed = Signal()  # any setting changed

    def __init__(self, parent=None):
        super().__init__(parent)
        self.mode = QComboBox()
        for key, label in MODE_LABELS.items():
            self.mode.addItem(label, key)
        self.mode.setToolTip(
            "Discover runs every stage of the loop as jobs in the worker processes; "
            "Propose only lets the strategy fill the store with candidates"
        )

        # what to search ------------------------------------------------------------------------
        self.strategy = QComboBox()
        for entry in STRATEGIES.values():
            self.strategy.addItem(entry.label, entry.key)
        self.strategy.setCurrentIndex(self.strategy.findData("mcts"))
        self.template = QComboBox()
        for path in sorted(EXAMPLES.glob("*.json")):
            self.template.addItem(path.stem, str(path))
        self.template.setCurrentText("conv2d")
        self.template.setToolTip("The operator the candidates replace: budgets are relative to it")
        self.flops = number(1.0, 0.01, 100.0, " x", "FLOPs cap relative to the template")
        self.params = number(1.0, 0.01, 100.0, " x", "Parameter cap relative to the template")
        self.use_params = QCheckBox("cap parameters")
        self.primitives = whole(8, 2, 16, "The most primitives a candidate may have")
        self.seed = whole(0, 0, 2**31 - 1, "Seeds the strategy, the data split and the initial weights")
        params = QHBoxLayout()
        params.addWidget(self.params)
        params.addWidget(self.use_params)
        search_box, search = _group("What to search")
        search.addRow("Strategy", self.strategy)
        search.addRow("Replace", self.template)
        search.addRow("FLOPs budget", self.flops)
        search.addRow("Parameter budget", params)
        search.addRow("Max primitives", self.primitives)
        search.addRow("Seed", self.seed)

        self.proxy = ProxyTaskForm()
        self.proxy.backbone.setToolTip("The network every candidate is trained in (its convolutions replaced)")

        # the stages ------------------------------------------------------------------------
        self.fisher = QCheckBox("screen with Fisher Potential")
        self.fisher.setChecked(True)
        self.fisher_threshold = number(
            FISHER_THRESHOLD,
            0.0,
            1000.0,
            " x the original's",
            "Screen out candidates below this share of the original network's",
        )
        self.fisher.toggled.connect(self.fisher_threshold.setEnabled)
        self.margin = number(
            1.0, 0.0, 100.0, " points", "How far below the original network's proxy accuracy a candidate may stay"
        )
        self.test_seeds = whole(
            SEEDS,
            0,
            20,
            "Train each candidate within the margin and the original again with this many seeds and test them, "
            "paired seed by seed: a survivor is one the test shows within; the test never ranks",
            special="no report",
        )
        self.seed_cap = whole(
            DEFAULT_RULE.cap,
            0,
            100,
            f"Test a candidate over the test seeds first, then {DEFAULT_RULE.step} more at a time up to this many "
            "until its paired interval decides (within or worse); the report says how many each verdict took",
            special="fixed count",
        )
        self.tune = QCheckBox("time survivors end to end, tuned")
        self.tune.setChecked(True)
        self.tune.setToolTip("The network with the candidate against the original, both with tuned kernels")
        self.stages_box, stages = _group("Stages")
        stages.addRow("", self.fisher)
        stages.addRow("Fisher threshold", self.fisher_threshold)
        stages.addRow("Accuracy margin", self.margin)
        stages.addRow("Test seeds", self.test_seeds)
        stages.addRow("Seed cap", self.seed_cap)
        stages.addRow("", self.tune)

        self.deployment = DeploymentForm(self.proxy.backbone)
        self.tune.toggled.connect(self.deployment.setEnabled)

        # budgets ---------------------------------------------------------------------------------
        self.minutes = whole(
            60,
            0,
            100_000,
            "Stop proposing after this long, counted once the original network is trained and tested",
            " min",
            special="no limit",
        )
        self.candidates = whole(0, 0, 1_000_000, "Stop after this many candidates", special="no limit")
        self.budget_box, budget = _group("Budget")
        budget.addRow("Time limit", self.minutes)
        budget.addRow("Candidates", self.candidates)

        # propose only ----------------------------------------------------------------------------
        self.samples = whole(50, 1, 100_000, "How many candidates to propose")
        self.evaluate = QComboBox()
        for key, label in EVALUATIONS.items():
            self.evaluate.addItem(label, key)
        self.measure = QCheckBox("measure every candidate with TVM (untuned)")
        self.propose_box, propose = _group("Propose")
        propose.addRow("Candidates", self.samples)
        propose.addRow("Score", self.evaluate)
        propose.addRow("", self.measure)

        top = QFormLayout()
        top.addRow("Run", self.mode)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        for box in (search_box, self.proxy, self.stages_box, self.deployment, self.budget_box, self.propose_box):
            layout.addWidget(box)
        layout.addStretch(1)
        self.mode.currentIndexChanged.connect(self._mode_changed)
        self._mode_changed()
        spins: list[QSpinBox | QDoubleSpinBox] = [*self.findChildren(QSpinBox), *self.findChildren(QDoubleSpinBox)]
        for spin in spins:
            spin.valueChanged.connect(self._changed)
        for combo in self.findChildren(QComboBox):
            combo.currentIndexChanged.connect(self._changed)
            combo.editTextChanged.connect(self._changed)
        for check in self.findChildren(QCheckBox):
            check.toggled.connect(self._changed)

    def _changed(self, *_) -> None:
        self.changed.emit()

    @property
    def discovering(self) -> bool:
        return self.mode.currentData() == DISCOVER

    def _mode_changed(self) -> None:
        for box in (self.proxy, self.stages_box, self.deployment, self.budget_box):
            box.setVisible(self.discovering)
        self.propose_box.setVisible(not self.discovering)

    def _search(self) -> dict:
        return {
            "template": read_document(self.template.currentData()),
            "strategy": self.strategy.currentData(),
            "budget_flops": self.flops.value(),
            "budget_params": self.params.value() if self.use_params.isChecked() else None,
            "max_primitives": self.primitives.value(),
        }

    def discovery_config(self, in_flight: int) -> DiscoveryConfig:
        """The discovery run's settings, checked (TesseraError names the first bad one)."""
        search = self._search()
        return DiscoveryConfig.of(
            search.pop("template"),
            self.proxy.backbone.currentText(),
            self.seed.value(),
            proxy=self.proxy.training(),
            deploy=self.deployment.timing(),
            **search,
            minutes=float(self.minutes.value()) or None,
            samples=self.candidates.value() or None,
            in_flight=in_flight,
            fisher=self.fisher.isChecked(),
            fisher_threshold=self.fisher_threshold.value(),
            margin=round(self.margin.value() / 100, 6),
            test_seeds=self.test_seeds.value(),
            seed_cap=self.seed_cap.value(),
            tune=self.tune.isChecked(),
            tuning_root=None,
            name="",
        )

    def search_config(self) -> SearchConfig:
        """The plain search job's settings, checked."""
        return SearchConfig(
            **self._search(),
            samples=self.samples.value(),
            evaluate=self.evaluate.currentData(),
            seed=self.seed.value(),
            tune_trials=0 if self.measure.isChecked() else None,
        )

    def restore(self, cfg: DiscoveryConfig) -> None:
        """Show a discovery run's settings (the template only when it is a bundled example)."""
        self.mode.setCurrentIndex(self.mode.findData(DISCOVER))
        self.strategy.setCurrentIndex(max(self.strategy.findData(cfg.strategy), 0))
        template = self.template.findText(str(cfg.template.get("name", "")))
        if template >= 0:
            self.template.setCurrentIndex(template)
        self.flops.setValue(cfg.budget_flops or 1.0)
        self.use_params.setChecked(cfg.budget_params is not None)
        self.params.setValue(cfg.budget_params or 1.0)
        self.primitives.setValue(cfg.max_primitives)
        self.seed.setValue(cfg.seed)
        task, training = cfg.settings, cfg.training
        proxy = self.proxy
        proxy.backbone.setCurrentText(task.backbone)
        proxy.dataset.setEditText(str(cfg.evaluation.get("dataset", proxy.dataset.currentText())))
        proxy.width_box.setValue(task.width)
        proxy.resolution.setValue(task.resolution)
        proxy.epochs.setValue(training.epochs)
        proxy.limit.setValue(task.limit or 0)
        proxy.batches.setValue(training.max_batches or 0)
        self.fisher.setChecked(cfg.fisher)
        self.fisher_threshold.setValue(cfg.fisher_threshold)
        self.margin.setValue(100 * cfg.margin)
        self.test_seeds.setValue(cfg.test_seeds)
        self.seed_cap.setValue(cfg.seed_cap)
        self.tune.setChecked(cfg.tune)
        deploy = cfg.deployment
        self.deployment.width_box.setValue(deploy.width or 0)
        self.deployment.resolution.setValue(deploy.resolution)
        self.deployment.trials.setValue(deploy.trials)
        self.minutes.setValue(round(cfg.minutes or 0))
        self.candidates.setValue(cfg.samples or 0)


def _group(title: str) -> tuple[QGroupBox, QFormLayout]:
    box = QGroupBox(title)
    return box, form_of(box)
