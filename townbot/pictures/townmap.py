"""The map of the town at one moment: buildings on the street grid, everyone at their place.

Pure: a world, its layout and a Moment in, a picture and the drawn positions out. The
buildings are drawn once per view and reused, so each moment only adds its people and its
objects in trouble. The same inputs always give the same pixels (Pillow's own bundled font).
"""

from __future__ import annotations

import io
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache

from PIL import Image, ImageDraw, ImageFont

from townbot.pictures.layout import Box, plan_town
from townbot.pictures.markers import PALETTE, VISITOR, Identity, identities
from townbot.town.history import Moment, Whereabouts
from townbot.world.model import World, split_path

FULL_SCALE = 64  # pixels per street block on the whole-town map
ZOOM_WIDTH = 960  # pixels across a single sector's close-up
HEADER = 30  # pixels of the caption band
BACKGROUND = (233, 239, 226)
STREET = (203, 203, 198)
INK = (52, 52, 60)
FAINT = (120, 120, 128)
TROUBLE = (214, 40, 40)
FILLS = {"home": (247, 232, 208), "business": (214, 230, 245), "public": (205, 233, 196),
         "college": (229, 221, 245)}
NIGHT = (20, 28, 60)  # laid over the town from 8 pm to 6 am
NIGHT_SHADE = 0.45
LIST_COLUMN = 300  # pixels a close-up gives each "name: action" line at least
KEY_LINE = 18  # pixels per line of the key under a map whose crowds have no room for names


@dataclass(frozen=True)
class Marker:
    """Where the map drew someone, in pixels, and the place it drew them at."""

    x: float
    y: float
    sector: str | None
    arena: str | None
    walking_to: str | None
    visitor: bool


@dataclass
class MapPicture:
    image: Image.Image
    positions: dict[str, Marker]
    region: Box
    scale: float
    highlighted: list[str] = field(default_factory=list)  # object paths drawn as in trouble
    unnamed: list[str] = field(default_factory=list)  # drawn without a name (listed in the key)

    def positions_json(self) -> dict[str, dict]:
        """The drawn positions as plain data (pixels; place or destination)."""
        return {name: {"x": round(m.x, 1), "y": round(m.y, 1), "sector": m.sector,
                       "arena": m.arena, "walking_to": m.walking_to, "visitor": m.visitor}
                for name, m in self.positions.items()}

    def png(self) -> bytes:
        buffer = io.BytesIO()
        self.image.save(buffer, format="PNG", optimize=False, compress_level=6)
        return buffer.getvalue()

    def to_pixels(self, x: float, y: float) -> tuple[float, float]:
        return (x - self.region.left) * self.scale, (y - self.region.top) * self.scale + HEADER

    def box_pixels(self, box: Box) -> list[float]:
        return [*self.to_pixels(box.left, box.top), *self.to_pixels(box.right, box.bottom)]


@cache
def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def place_font(scale: float) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """The face of arenas', streets' and objects' names at this scale."""
    return font(max(8, round(scale * 0.15)))


def fit(text: str, face: ImageFont.FreeTypeFont | ImageFont.ImageFont, width: float) -> str:
    """The text, cut with an ellipsis so it fits `width` pixels."""
    if face.getlength(text) <= width:
        return text
    while text and face.getlength(text + "…") > width:
        text = text[:-1]
    return text + "…" if text else ""


# Shorter words a place's name takes, always the same, when the whole name does not fit.
SHORT_WORDS = (("family's house", "family"), ("apartment", "apt."), ("College", "Coll."),
               ("Supply Store", "Supply"), ("common room", "common rm"), ("bathroom", "bath"),
               ("Market and Pharmacy", "Market"), ("room", "rm"))


def abbreviate(name: str, face: ImageFont.FreeTypeFont | ImageFont.ImageFont, width: float,
               given_names: frozenset[str] = frozenset()) -> str:
    """A place's name that fits `width`, shortened the same way everywhere: first its usual
    short words, then people's given names to initials ("I. Rodriguez's apt."), and only then
    cut with an ellipsis."""
    if face.getlength(name) <= width:
        return name
    for long, short in SHORT_WORDS:
        name = name.replace(long, short)
        if face.getlength(name) <= width:
            return name
    words = name.split(" ")
    name = " ".join(f"{word[0]}." if word in given_names and index + 1 < len(words) else word
                    for index, word in enumerate(words))
    return fit(name, face, width)


def drawable(text: str) -> str:
    """The text without the symbols Pillow's own font has no glyph for (emoji, joiners), which
    it would draw as empty boxes; spaces they leave are closed up."""
    kept = "".join(c for c in text if not (unicodedata.category(c) in ("So", "Cs", "Co", "Cf")
                                          or 0xFE00 <= ord(c) <= 0xFE0F or ord(c) >= 0x1F000))
    return " ".join(kept.split())


class MapPainter:
    """Draws moments of one world; keeps each view's buildings to draw over."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.layout = plan_town(world)
        self._bases: dict[object, tuple[Image.Image, Box, float]] = {}  # by view (and night)

    def view(self, focus: str | None) -> tuple[Image.Image, Box, float]:
        """The buildings of the whole town, or of one sector close up (cached)."""
        if focus not in self._bases:
            if focus is None:
                region, scale = self.layout.bounds, FULL_SCALE
            else:
                region = self.layout.sectors[focus].box.grown(0.45)
                scale = ZOOM_WIDTH / region.width
            self._bases[focus] = (self._draw_base(region, scale), region, scale)
        return self._bases[focus]

    def draw(self, moment: Moment, focus: str | None = None, people: bool = True) -> MapPicture:
        """The moment's map, darker at night; without `people` they are placed (in
        `positions`) but not drawn, for a page that draws them itself."""
        if focus is not None and focus not in self.layout.sectors:
            raise KeyError(f"no sector called {focus}")
        base, region, scale = self.view(focus)
        if is_night(moment.time):
            base = self._night(focus, base)
        picture = MapPicture(base.copy(), {}, region, scale)
        pen = ImageDraw.Draw(picture.image)
        people_pen = pen if people else None
        self._caption(pen, picture, moment.time, focus)
        for path, state in sorted(moment.troubles.items()):
            self._trouble(pen, picture, path, state)
        marks = self.identities(moment)
        groups: dict[tuple[str, str], list[Whereabouts]] = defaultdict(list)
        walkers = []
        for person in moment.people.values():
            if person.walk is not None:
                walkers.append(person)
            elif person.sector is not None and person.arena is not None and \
                    self.world.has_arena(person.sector, person.arena):
                groups[(person.sector, person.arena)].append(person)
        for (sector, arena), crowd in sorted(groups.items()):
            if focus in (None, sector):
                self._arena_people(people_pen, picture, sector, arena, crowd, marks)
        self._walkers(people_pen, picture, walkers, moment.time, marks)
        if people and picture.unnamed:
            self._key(picture, moment, marks)
        return picture

    def identities(self, moment: Moment) -> dict[str, Identity]:
        """Everyone's colour and initials at `moment` (a resident's never change)."""
        return identities(list(self.world.personas),
                          [p.name for p in moment.people.values() if p.visitor])

    def _night(self, focus: str | None, base: Image.Image) -> Image.Image:
        """The view's buildings under the night's shade (cached beside the day's)."""
        key = ("night", focus)
        if key not in self._bases:
            shade = Image.new("RGB", base.size, NIGHT)
            self._bases[key] = (Image.blend(base, shade, NIGHT_SHADE), *self._bases[focus][1:])
        return self._bases[key][0]

    def _key(self, picture: MapPicture, moment: Moment, marks: dict[str, Identity]) -> None:
        """Under the map, who is who among the people drawn without a name (a crowd)."""
        face, width = font(13), picture.image.width
        entries = [(marks[name], f"{drawable(name)}: {drawable(moment.people[name].action)}")
                   for name in sorted(picture.unnamed)]
        column = max(240, width // 4)
        columns = max(1, width // column)
        rows = -(-len(entries) // columns)
        taller = Image.new("RGB", (width, picture.image.height + rows * KEY_LINE + 8),
                           (255, 255, 255))
        taller.paste(picture.image, (0, 0))
        pen = ImageDraw.Draw(taller)
        top = picture.image.height + 4
        for index, (mark, text) in enumerate(entries):
            column_index, row = divmod(index, rows)
            x, y = 8 + column_index * column, top + row * KEY_LINE + KEY_LINE / 2
            pen.ellipse([x, y - 8, x + 16, y + 8], fill=mark.colour)
            pen.text((x + 8, y), mark.initials, fill=(255, 255, 255),
                     font=font(9 if len(mark.initials) <= 2 else 7), anchor="mm")
            pen.text((x + 20, y), fit(text, face, column - 28), fill=INK, font=face, anchor="lm")
        picture.image = taller

    # --- the buildings ----------------------------------------------------------------------

    def _draw_base(self, region: Box, scale: float) -> Image.Image:
        width, height = round(region.width * scale), round(region.height * scale) + HEADER
        image = Image.new("RGB", (width, height), BACKGROUND)
        pen = ImageDraw.Draw(image)
        sheet = MapPicture(image, {}, region, scale)  # for its conversion to pixels
        at = sheet.to_pixels
        given = frozenset(name.split()[0] for name in self.world.personas)
        for street in self.layout.streets:
            pen.line([at(*street.start), at(*street.end)], fill=STREET, width=max(3, round(0.26 * scale)))
        for plan in self.layout.sectors.values():
            fill = FILLS.get(plan.kind, (235, 235, 235))
            box = sheet.box_pixels(plan.box)
            door = at(*plan.entrance)
            edge = (min(max(door[0], box[0]), box[2]), min(max(door[1], box[1]), box[3]))
            pen.line([door, edge], fill=FAINT, width=max(1, round(scale / 28)))
            pen.rounded_rectangle(box, radius=max(2, scale / 10), fill=fill, outline=INK,
                                  width=max(1, round(scale / 40)))
            room = box[2] - box[0] - scale * 0.16
            size = max(9, round(scale * 0.2))
            while size > 9 and font(size).getlength(plan.name) > room:
                size -= 1  # a long name gets a smaller face before it is cut
            pen.text((box[0] + scale * 0.08, box[1] + scale * 0.06),
                     abbreviate(plan.name, font(size), room, given), fill=INK, font=font(size))
            light = tuple(min(255, c + (255 - c) // 2) for c in fill)
            label = place_font(scale)
            for arena, cell in plan.arenas.items():
                cell_box = sheet.box_pixels(cell)
                pen.rectangle(cell_box, fill=light, outline=(170, 170, 170))
                pen.text((cell_box[0] + 2, cell_box[1] + 1),
                         abbreviate(arena, label, cell_box[2] - cell_box[0] - 4, given),
                         fill=FAINT, font=label)
            pen.ellipse([door[0] - 2, door[1] - 2, door[0] + 2, door[1] + 2], fill=INK)
        doors = [at(*plan.entrance) for plan in self.layout.sectors.values()]
        for street in self.layout.streets:  # over the doors' paths, clear of doors
            self._street_name(image, street.name, at(*street.start), at(*street.end), scale, doors)
        return image

    @staticmethod
    def _street_name(image: Image.Image, name: str, start: tuple[float, float],
                     end: tuple[float, float], scale: float,
                     doors: list[tuple[float, float]]) -> None:
        face = place_font(scale)
        length = abs(end[0] - start[0]) + abs(end[1] - start[1])
        text = fit(name, face, length * 0.8)
        if not text:
            return
        stamp = Image.new("RGBA", (round(face.getlength(text)) + 2, round(scale * 0.2) + 2))
        ImageDraw.Draw(stamp).text((1, 0), text, fill=(110, 110, 104, 255), font=face)
        if start[0] == end[0]:  # a north-south street
            stamp = stamp.rotate(90, expand=True)
        def corner(share: float) -> tuple[float, float]:
            return (start[0] + (end[0] - start[0]) * share - stamp.width / 2,
                    start[1] + (end[1] - start[1]) * share - stamp.height / 2)

        def clear(x: float, y: float) -> bool:
            return not any(x - 4 <= dx <= x + stamp.width + 4 and y - 4 <= dy <= y + stamp.height + 4
                           for dx, dy in doors)

        # a quarter of the way along, clear of the crossings at either end, or further on
        # where a door's path would cross the name
        shares = (0.25, 0.5, 0.75, 0.375, 0.625, 0.125, 0.875)
        x, y = next((corner(s) for s in shares if clear(*corner(s))), corner(0.25))
        image.paste(stamp, (round(x), round(y)), stamp)

    # --- what changes from moment to moment -------------------------------------------------

    def _caption(self, pen: ImageDraw.ImageDraw, picture: MapPicture, time: datetime,
                 focus: str | None) -> None:
        pen.rectangle([0, 0, picture.image.width, HEADER - 1], fill=(255, 255, 255))
        where = focus or self.world.town
        pen.text((8, 7), f"{where}, {time:%A %B %d %Y, %H:%M}", fill=INK, font=font(15))
        if picture.image.width > 600:
            self._legend(pen, picture.image.width)

    def _legend(self, pen: ImageDraw.ImageDraw, width: int) -> None:
        face, r, y = font(12), 6, HEADER / 2
        texts = ("resident", "visitor", "on the way", "trouble")
        x = width - 8 - sum(face.getlength(t) + 3 * r + 14 for t in texts)
        for text in texts:
            centre = x + r
            if text == "resident":
                pen.ellipse([centre - r, y - r, centre + r, y + r], fill=PALETTE[0])
            elif text == "visitor":
                pen.polygon([(centre, y - r), (centre + r, y), (centre, y + r), (centre - r, y)],
                            fill=VISITOR, outline=INK)
            elif text == "on the way":
                pen.ellipse([centre - r, y - r, centre + r, y + r], outline=PALETTE[0],
                            width=2)
            else:
                pen.rectangle([centre - r, y - r, centre + r, y + r], outline=TROUBLE, width=2)
            pen.text((x + 2 * r + 4, y), text, fill=FAINT, font=face, anchor="lm")
            x += face.getlength(text) + 3 * r + 14

    def _cell(self, picture: MapPicture, sector: str, arena: str) -> list[float]:
        return picture.box_pixels(self.layout.sectors[sector].arenas[arena])

    def _trouble(self, pen: ImageDraw.ImageDraw, picture: MapPicture, path: str, state: str) -> None:
        parts = split_path(path)
        if len(parts) != 3 or not self.world.has_arena(parts[0], parts[1]):
            return
        box = self._cell(picture, parts[0], parts[1])
        pen.rectangle(box, outline=TROUBLE, width=max(2, round(picture.scale / 20)))
        face = place_font(picture.scale)
        text = fit(f"! {parts[2]} {state}", face, box[2] - box[0] - 4)
        pen.text((box[0] + 2, box[3] - face.size - 3), text, fill=TROUBLE, font=face)
        picture.highlighted.append(path)

    def _arena_people(self, pen: ImageDraw.ImageDraw | None, picture: MapPicture, sector: str,
                      arena: str, people: list[Whereabouts], marks: dict[str, Identity]) -> None:
        left, top, right, bottom = self._cell(picture, sector, arena)
        top += place_font(picture.scale).size + 2  # under the arena's name
        people = sorted(people, key=lambda p: p.name)
        if picture.scale >= 120:  # a close-up: a list of who does what
            self._listed(pen, picture, sector, arena, people, marks, (left, top, right, bottom))
            return
        radius, label = marker_size(picture.scale), font(label_size(picture.scale))
        columns, step = slots(len(people), right - left, bottom - top, radius, label.size)
        slot_w = (right - left) / columns
        named = step >= 2 * radius + label.size and all(
            label.getlength(drawable(p.name.split()[0])) <= max(slot_w - 2, 2 * radius)
            for p in people)  # a crowd's names are all in the key, never cut
        for index, person in enumerate(people):
            row, column = divmod(index, columns)
            x = left + slot_w * (column + 0.5)
            y = top + radius + row * step
            self._person(pen, person, marks[person.name], x, y, radius,
                         drawable(person.name.split()[0]) if named else "", label)
            if not named:
                picture.unnamed.append(person.name)
            picture.positions[person.name] = Marker(x, y, sector, arena, None, person.visitor)

    def _listed(self, pen: ImageDraw.ImageDraw | None, picture: MapPicture, sector: str,
                arena: str, people: list[Whereabouts], marks: dict[str, Identity],
                cell: tuple[float, float, float, float]) -> None:
        """A close-up's room: each person on a line with their full name and what they do, in
        as many columns as the room is wide; the lines close up to fit a crowd."""
        left, top, right, bottom = cell
        columns = max(1, min(len(people), int((right - left) // LIST_COLUMN)))
        rows = -(-len(people) // columns)
        line = min(36.0, max(12.0, (bottom - top - 4) / rows))
        radius = min(marker_size(picture.scale), line / 2 - 1)
        face = font(max(9, min(16, round(line * 0.5))))
        width = (right - left) / columns
        for index, person in enumerate(people):
            column, row = divmod(index, rows)
            x = left + column * width + radius + 4
            y = top + 2 + row * line + line / 2
            self._person(pen, person, marks[person.name], x, y, radius, "", face)
            if pen is not None:
                text = f"{drawable(person.name)}: {drawable(person.action)}"
                pen.text((x + radius + 4, y), fit(text, face, width - 2 * radius - 12), fill=INK,
                         font=face, anchor="lm")
            picture.positions[person.name] = Marker(x, y, sector, arena, None, person.visitor)

    def _walkers(self, pen: ImageDraw.ImageDraw | None, picture: MapPicture,
                 walkers: list[Whereabouts], time: datetime, marks: dict[str, Identity]) -> None:
        radius, label = marker_size(picture.scale), font(label_size(picture.scale))
        spots: dict[tuple[int, int], list[tuple[Whereabouts, float, float, list]]] = \
            defaultdict(list)
        for person in sorted(walkers, key=lambda p: p.name):
            walk = person.walk
            assert walk is not None
            if walk.origin not in self.world.sectors or walk.sector not in self.world.sectors:
                continue
            route = self.world.route(walk.origin, walk.sector)
            point, rest = along(route, walk.progress(time))
            x, y = picture.to_pixels(*point)
            if 0 <= x < picture.image.width and HEADER <= y < picture.image.height:
                spots[(round(x), round(y))].append((person, x, y, rest))  # else off a close-up
        placed = []
        for together in spots.values():
            for place, (person, x, y, rest) in enumerate(together):
                # walkers at one spot stand side by side, their names in the key
                x += (place - (len(together) - 1) / 2) * (2 * radius + 2)
                placed.append((person, x, y, len(together) == 1))
                path = [(x, y)] + [picture.to_pixels(*p) for p in rest]
                if len(path) > 1 and pen is not None:  # every route first: none crosses a face
                    pen.line(path, fill=marks[person.name].colour,
                             width=max(1, round(picture.scale / 28)))
        for person, x, y, alone in placed:
            name = drawable(person.name.split()[0]) if alone else ""
            self._person(pen, person, marks[person.name], x, y, radius, name, label, hollow=True)
            if not name:
                picture.unnamed.append(person.name)
            picture.positions[person.name] = Marker(x, y, None, None, person.walk.sector,
                                                    person.visitor)

    @staticmethod
    def _person(pen: ImageDraw.ImageDraw | None, person: Whereabouts, mark: Identity, x: float,
                y: float, radius: float, text: str,
                label: ImageFont.ImageFont | ImageFont.FreeTypeFont, hollow: bool = False) -> None:
        if pen is None:
            return  # placed only
        colour, ink = mark.colour, (255, 255, 255)
        if person.visitor:
            pen.polygon([(x, y - radius * 1.25), (x + radius * 1.25, y), (x, y + radius * 1.25),
                         (x - radius * 1.25, y)], fill=colour, outline=INK)
            ink = INK
        elif hollow:
            pen.ellipse([x - radius, y - radius, x + radius, y + radius], fill=(255, 255, 255),
                        outline=colour, width=max(2, round(radius / 4)))
            ink = colour
        else:
            pen.ellipse([x - radius, y - radius, x + radius, y + radius], fill=colour,
                        outline=(255, 255, 255))
        letters = len(mark.initials)
        inside = font(max(7, round(radius * (0.95 if letters <= 2 else 1.6 / letters))))
        pen.text((x, y), mark.initials, fill=ink, font=inside, anchor="mm")
        if text:
            pen.text((x, y + radius + 1), text, fill=INK, font=label, anchor="ma")


def is_night(time: datetime) -> bool:
    """From 8 pm to 6 am the map is drawn dark."""
    return time.hour >= 20 or time.hour < 6


def marker_size(scale: float) -> float:
    return min(16.0, max(6.0, scale * 0.16))


def label_size(scale: float) -> int:
    return min(16, max(8, round(scale * 0.16)))


def slots(count: int, width: float, height: float, radius: float,
          label: int) -> tuple[int, float]:
    """(columns, row step) for `count` people in a cell: roomy when they fit, packed when not."""
    slot_h = 2 * radius + label + 3
    columns = max(1, int(width // (label * 5)))  # room for a first name under each
    most = max(1, int(width // (2 * radius + 2)))  # then rows close up instead
    while columns < most and -(-count // columns) * slot_h > height:
        columns += 1
    columns = max(1, min(columns, count))
    rows = -(-count // columns)
    if rows * slot_h <= height or rows == 1:
        return columns, slot_h
    return columns, max(1.0, (height - 2 * radius) / (rows - 1))


def along(route: list[tuple[int, int]], progress: float) -> tuple[tuple[float, float],
                                                                   list[tuple[int, int]]]:
    """The point `progress` (0..1) of the way along a route, and the grid points still ahead."""
    if len(route) == 1:
        return (float(route[0][0]), float(route[0][1])), []
    distance = progress * (len(route) - 1)
    index = min(int(distance), len(route) - 2)
    part = distance - index
    (x1, y1), (x2, y2) = route[index], route[index + 1]
    return (x1 + (x2 - x1) * part, y1 + (y2 - y1) * part), route[index + 1:]


def animate(pictures: list[MapPicture], frame_ms: int) -> bytes:
    """A looping GIF of the pictures, all on the first picture's palette so colours hold."""
    first = pictures[0].image.quantize(colors=255, dither=Image.Dither.NONE)
    rest = [p.image.quantize(palette=first, dither=Image.Dither.NONE) for p in pictures[1:]]
    buffer = io.BytesIO()
    first.save(buffer, format="GIF", save_all=True, append_images=rest, duration=frame_ms,
               loop=0, optimize=False, disposal=1)
    return buffer.getvalue()
