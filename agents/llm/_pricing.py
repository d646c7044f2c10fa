"""Optional price table: cost of a call from its token usage.

Prices are whatever the user puts in the config (USD per million tokens); models without an entry have
unknown cost (``None``), never a guessed one.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agents.llm._types import Usage

__all__ = ["Price", "PriceTable"]


class Price(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt_per_mtok: float = Field(ge=0)
    completion_per_mtok: float = Field(ge=0)


class PriceTable(BaseModel):
    model_config = ConfigDict(frozen=True)

    prices: dict[str, Price] = Field(default_factory=dict)

    def cost(self, model: str, usage: Usage) -> float | None:
        price = self.prices.get(model)
        if price is None:
            return None
        return (
            usage.prompt_tokens * price.prompt_per_mtok + usage.completion_tokens * price.completion_per_mtok
        ) / 1_000_000
