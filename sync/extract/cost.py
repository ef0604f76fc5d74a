"""What an extraction run will cost, before it runs: tokens in, the most tokens out, dollars.

Prices are list prices in US dollars per million tokens, copied from Anthropic's pricing pages in
November 2026. They are an estimate only: batch discounts, caching and price changes are ignored,
and a model missing from the table gets no dollar figure at all rather than a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# model id -> (input, output) USD per million tokens; a dated snapshot costs what its model costs.
PRICES: dict[str, tuple[float, float]] = {
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-sonnet-4-6": (3.0, 15.0),
    "claude-opus-4-5": (5.0, 25.0),
    "claude-sonnet-5": (2.0, 10.0),
    "claude-sonnet-5-5": (2.0, 10.0),
    "claude-opus-5": (5.0, 25.0),
    "claude-opus-5-5": (4.0, 20.0),
    "claude-fable-5-1": (10.0, 50.0),
}
_SNAPSHOT = re.compile(r"-\d{8}$")
COUNTED = "counted with the Messages count_tokens endpoint"
ESTIMATED = "estimated at 4 characters a token"


def price_of(model: str) -> tuple[float, float] | None:
    """The price of a model id or of its dated snapshot (`claude-haiku-4-5-20251001`); None if unknown."""
    return PRICES.get(_SNAPSHOT.sub("", model))


@dataclass(frozen=True, slots=True)
class Estimate:
    model: str
    documents: int
    chunks: int
    input_tokens: int
    method: str  # COUNTED or ESTIMATED, with the reason when counting failed
    max_output_tokens: int

    @property
    def price(self) -> tuple[float, float] | None:
        return price_of(self.model)

    @property
    def input_cost(self) -> float | None:
        return None if self.price is None else self.input_tokens * self.price[0] / 1e6

    @property
    def max_cost(self) -> float | None:
        """Input plus the most output the run may produce (every chunk using its whole output budget)."""
        if self.price is None or self.input_cost is None:
            return None
        return self.input_cost + self.max_output_tokens * self.price[1] / 1e6


def cost_of(model: str, input_tokens: int, output_tokens: int) -> float | None:
    price = price_of(model)
    return None if price is None else (input_tokens * price[0] + output_tokens * price[1]) / 1e6
