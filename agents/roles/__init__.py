"""The four roles behind :class:`agents.contracts.AgentSet`, backed by a model through the trace."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agents.config import ROLES, AgentsConfig, load_config, resolve_for_trace
from agents.contracts import (
    AuditContext,
    AuditResult,
    DebugContext,
    DebugResult,
    DesignContext,
    DesignResult,
    ImplementContext,
    ImplementResult,
)
from agents.llm import ChatProvider, OpenAIProvider
from agents.llm._retry import DEFAULT_SLEEP, Sleep
from agents.prompts import load_prompt
from agents.roles._base import AnswerError, RoleEnv
from agents.roles.debugger import debug
from agents.roles.designer import design
from agents.roles.implementer import implement
from agents.roles.verifier import audit
from agents.skills import ROLE_SKILLS, SkillLibrary
from agents.tools import ROLE_TOOLS
from agents.trace import Trace, normalize_base_url

__all__ = ["AnswerError", "LLMAgents"]


class LLMAgents:
    """``AgentSet`` with a model behind every role.

    The provider is created lazily on the first live call (``provider_factory``), so strict replay never
    constructs an HTTP client. Example::

        agents = LLMAgents(load_config(op_dir), trace, op_dir=op_dir)
        result = agents.design(ctx)
    """

    def __init__(
        self,
        config: AgentsConfig | Mapping[str, Any],
        trace: Trace,
        *,
        op_dir: Path | str | None = None,
        provider_factory: Callable[[], ChatProvider] | None = None,
        skills: SkillLibrary | None = None,
        prompts_dir: Path | str | None = None,
        base_url: str | None = None,
        sleep: Sleep = DEFAULT_SLEEP,
    ) -> None:
        if not isinstance(config, AgentsConfig):  # plain options (e.g. CLI overrides) -> resolve them here
            config, resolved_url = resolve_for_trace(load_config(op_dir, overrides=dict(config)), trace)
            base_url = base_url or resolved_url
        self.config = config
        self.trace = trace
        self._provider: ChatProvider | None = None
        self._factory = provider_factory or (lambda: OpenAIProvider(
            base_url=config.base_url, api_key=os.environ.get("OPENAI_API_KEY"), timeout_s=config.llm.timeout_s,
            retry=config.retry, sleep=sleep, prices=config.price_table))
        self.env = RoleEnv(
            config=config,
            trace=trace,
            provider=self._get_provider,
            skills=skills or SkillLibrary(),
            prompts={role: load_prompt(role, prompts_dir) for role in ROLES},
            base_url=base_url or config.base_url,
            op_dir=Path(op_dir) if op_dir is not None else None,
        )

        trace.update_manifest(models=dict(config.models), base_url=normalize_base_url(self.env.base_url),
                              prompt_hashes=self.prompt_hashes, skills_hash=self.env.skills.digest,
                              roles=self.role_specs())

    def _get_provider(self) -> ChatProvider:
        if self._provider is None:
            self._provider = self._factory()
        return self._provider

    @property
    def provider_built(self) -> bool:
        """Whether a provider (HTTP client) was ever constructed (never, in strict replay)."""
        return self._provider is not None

    def role_specs(self) -> dict[str, dict[str, Any]]:
        """Everything that defines each role (model, prompt hash, tools, skills): enough to rebuild it."""
        return {
            role: {"model": self.config.model_for(role), "prompt_sha256": self.env.prompts[role].sha256,
                   "tools": list(ROLE_TOOLS[role]), "skills_inject": list(ROLE_SKILLS[role].inject),
                   "skills_allowed": list(ROLE_SKILLS[role].allowed), "skill_cap": ROLE_SKILLS[role].cap,
                   "max_tool_rounds": self.config.llm.max_tool_rounds, "max_repairs": self.config.llm.max_repairs,
                   "structured_output": self.config.llm.structured_output}
            for role in ROLES
        }

    @property
    def prompt_hashes(self) -> dict[str, str]:
        return {role: t.sha256 for role, t in self.env.prompts.items()}

    def design(self, ctx: DesignContext) -> DesignResult:
        return design(self.env, ctx)

    def implement(self, ctx: ImplementContext) -> ImplementResult:
        return implement(self.env, ctx)

    def audit(self, ctx: AuditContext) -> AuditResult:
        return audit(self.env, ctx)

    def debug(self, ctx: DebugContext) -> DebugResult:
        return debug(self.env, ctx)
