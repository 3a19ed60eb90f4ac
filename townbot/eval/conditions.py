"""The paper's evaluation conditions (section 6.2): each one's name, its label in Figure 8 and the
parts of the memory stream it switches off (fields of townbot.mind.answering.Ablation). Plain
data, so that `townbot eval`'s arguments can name them without loading the mind."""

from __future__ import annotations

CONDITION_SWITCHES: dict[str, tuple[str, dict[str, bool]]] = {
    "full": ("full architecture", {}),
    "no_reflection": ("no reflection", {"reflections": False}),
    "no_reflection_planning": ("no reflection, no planning",
                               {"reflections": False, "plans": False}),
    "no_memory": ("no observation, no reflection, no planning",
                  {"observations": False, "reflections": False, "plans": False}),
}

# TrueSkill depends on the order matches are played in: each rating is the mean over this many
# random orders of the same rankings, with the interval that holds 95% of them.
MATCH_ORDERS = 100
