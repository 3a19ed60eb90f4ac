"""Who is who on a map: a colour and initials for each person that no one else shares.

Colours go to the world's residents in name order, so each keeps theirs from moment to moment
and from the PNG to the web page; the palette has a colour for each of the 25 residents and
more. Initials start as first and last letters and grow from the last name where two people
would share them ("MLo" and "MLi" for Maria Lopez and Mei Lin).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

# Dark enough for white initials, far enough apart to tell at a glance.
PALETTE = [(29, 78, 216), (185, 28, 28), (21, 128, 61), (126, 34, 206), (180, 83, 9),
           (14, 116, 144), (190, 24, 93), (77, 124, 15), (67, 56, 202), (154, 52, 18),
           (15, 118, 110), (162, 28, 175), (71, 85, 105), (161, 98, 7), (3, 105, 161),
           (225, 29, 72), (54, 83, 20), (120, 53, 15), (88, 28, 135), (8, 145, 178),
           (234, 88, 12), (22, 101, 52), (30, 58, 138), (157, 23, 77), (82, 82, 91),
           (192, 38, 211), (101, 163, 13), (220, 38, 38)]
VISITOR = (245, 158, 11)


@dataclass(frozen=True)
class Identity:
    colour: tuple[int, int, int]
    initials: str

    @property
    def css(self) -> str:
        red, green, blue = self.colour
        return f"#{red:02x}{green:02x}{blue:02x}"


def identities(residents: list[str], visitors: list[str] | None = None) -> dict[str, Identity]:
    """Each person's colour and initials, unique among everyone named here."""
    names = sorted(residents) + sorted(set(visitors or []) - set(residents))
    tags = unique_initials(names)
    order = {name: index for index, name in enumerate(sorted(residents))}
    return {name: Identity(PALETTE[order[name] % len(PALETTE)] if name in order else VISITOR,
                           tags[name]) for name in names}


def unique_initials(names: list[str]) -> dict[str, str]:
    """First and last initials, lengthened from the last name (then numbered) where shared."""
    groups: dict[str, list[str]] = defaultdict(list)
    for name in names:
        groups[_initials(name, 1)].append(name)
    result = {}
    for tag, group in groups.items():
        for letters in range(1, 4):  # the plain initials first, then more of the last name
            longer = {name: _initials(name, letters) for name in group}
            if len(set(longer.values())) == len(group):
                result.update(longer)
                break
        else:
            result.update({name: f"{tag}{i + 1}" for i, name in enumerate(sorted(group))})
    return result


def _initials(name: str, letters: int) -> str:
    # letters and digits only: an emoji or a quote mark makes no initial
    words = ["".join(c for c in word if c.isalnum()) for word in name.split()]
    words = [word for word in words if word] or ["?"]
    if len(words) == 1:
        word = words[0]
        return (word[:1].upper() + word[1:1 + letters].lower()) or "?"
    last = words[-1]
    return words[0][:1].upper() + last[:1].upper() + last[1:letters].lower()
