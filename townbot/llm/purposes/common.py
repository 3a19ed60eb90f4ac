"""What every purpose shares: the typed question an ask is made from, and pieces of schemas.

Small integer ranges are enums (Literal) because one structured-output grammar ignores
minimum/maximum. A question that picks from a list (an object in the room, a known place and
area, a participant of a conversation) gets a schema with the list as an enum (`*_among`), so
that a server enforcing schemas cannot name anything else; a list longer than ENUM_LIMIT keeps
the plain schema and the question's check alone.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Any, ClassVar, Generic, Literal

from pydantic import BaseModel, Field, create_model

from townbot.llm.port import AnswerT, Ask
from townbot.prompting import quoted

Score = Literal[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
Line = Annotated[str, Field(min_length=1, max_length=300)]
Turn = tuple[str, str]  # (speaker, text): one line of a conversation
ENUM_LIMIT = 80  # longer lists would swell every request's schema: the check refuses instead
SCHEMAS_KEPT = 2048  # schemas made for lists of choices (each list is a town's, so they recur)
NOTHING = "- (nothing in particular)"  # a prompt's empty list


class Question(ABC, Generic[AnswerT]):
    """The typed context of one ask (each purpose's is a frozen dataclass): what its prompt is
    rendered from, and what the offline model answers from. It says the purpose's prompt,
    answer schema, safe default and check, and the offline model's answer (`offline`, from
    the question alone and the model's seed)."""

    purpose: ClassVar[str]
    answer_schema: ClassVar[type[BaseModel]]  # (`schema` narrows it to the question's choices)
    optional: ClassVar[bool] = False  # under a tight budget the default simply stands

    @abstractmethod
    def prompt(self) -> str: ...

    def schema(self) -> type[AnswerT]:
        return self.answer_schema  # type: ignore[return-value]

    @abstractmethod
    def default(self) -> AnswerT: ...

    def problem(self, answer: AnswerT) -> str | None:
        """Why a well-formed answer cannot be used, or None when it can."""
        return None

    @abstractmethod
    def offline(self, seed: int) -> AnswerT: ...

    def ask(self, agent: str | None = None) -> Ask[AnswerT]:
        checks = type(self).problem is not Question.problem
        return Ask(purpose=self.purpose, prompt=self.prompt(), schema=self.schema(),
                   default=self.default, context=self, agent=agent,
                   check=self.problem if checks else None, optional=self.optional)


def choice_of(options: Iterable[str]) -> Any:
    """A Literal of the options (in their order, once each), or None when there are none or
    too many to send as an enum."""
    unique = tuple(dict.fromkeys(options))
    if not unique or len(unique) > ENUM_LIMIT:
        return None
    return Literal[unique]  # type: ignore[valid-type]


@lru_cache(maxsize=SCHEMAS_KEPT)
def items_choosing(outer: type[BaseModel], items: str, inner: type[BaseModel], field: str,
                   options: tuple[str, ...], bounds: tuple[int, int], default: Any = ...) -> Any:
    """`outer` whose list `items` holds `inner`s with `field` one of `options` (`outer` itself
    when there are none or too many for an enum)."""
    choice = choice_of(options)
    if choice is None:
        return outer
    item = create_model(inner.__name__, __base__=inner, **{field: (choice, default)})
    low, high = bounds
    return create_model(outer.__name__, __base__=outer, **{
        items: (Annotated[list[item], Field(min_length=low, max_length=high)], ...)})


def bulleted(lines: Iterable[str], empty: str = "- (nothing)") -> str:
    """One "- line" a line, or `empty` when there are none."""
    return "\n".join([f"- {line}" for line in lines]) or empty


def transcript(lines: Iterable[Turn]) -> str:
    """The lines so far, each quoted and bounded: a visitor's words are among them."""
    return "\n".join([f"{speaker}: {quoted(text)}" for speaker, text in lines]) \
        or "(nothing yet)"


@dataclass(frozen=True)
class Recalled:
    """A memory as a conversation's speaker has it in mind (retrieved for a line, or among the
    news it knows): a prompt shows its text; the offline model also weighs its importance and
    kind."""

    text: str
    importance: int
    kind: str
