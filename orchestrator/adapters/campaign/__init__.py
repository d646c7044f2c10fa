"""Campaigns: many operators x k samples x one agent configuration, on Ray; pass@k and cost out.

``python -m orchestrator campaign run SUITE --samples k --out DIR`` and ``campaign report DIR`` (see
docs/campaign.md). A campaign is an adapter over the run API (:mod:`orchestrator.api`): every (task, sample)
is one ordinary pipeline run in its own op dir copy under ``DIR/runs/``.
"""

from orchestrator.adapters.campaign._driver import CampaignProgress, CampaignStopped, run_campaign
from orchestrator.adapters.campaign._executor import Executor, LocalExecutor, RayExecutor
from orchestrator.adapters.campaign._ledger import CATEGORIES, CampaignConfig, Ledger, SampleResult
from orchestrator.adapters.campaign._passk import mean_pass_at_k, pass_at_k
from orchestrator.adapters.campaign._report import CampaignSummary, summarize, write_html
from orchestrator.adapters.campaign._suite import Task, load_suite

__all__ = [
    "CATEGORIES", "CampaignConfig", "CampaignProgress", "CampaignStopped", "CampaignSummary", "Executor", "Ledger",
    "LocalExecutor", "RayExecutor", "SampleResult", "Task", "load_suite", "mean_pass_at_k", "pass_at_k",
    "run_campaign", "summarize", "write_html",
]
