"""Small stored towns for the picture and web tests: residents, a visitor, trouble."""

from __future__ import annotations

from pathlib import Path

from conftest import open_engine

from townbot.town.service import Person, TownService
from townbot.world.model import World

VISITOR = Person("test:ada", "Ada")
MODERATOR = Person("test:mod", "Mo", moderator=True)
STOVE = "Isabella Rodriguez's apartment: kitchen: stove"


async def busy_morning(world: World, db: Path) -> None:
    """07:00 to about 10:00: Ada joins at the park and walks to the cafe; a stove burns."""
    engine = await open_engine(world, db)
    service = TownService(engine)
    try:
        for _ in range(8):
            await service.tick()
        await service.join(VISITOR, "Ada", "a reporter for the Gazette")
        await service.tick()
        await service.go(VISITOR, "Hobbs Cafe")
        await service.set_object(MODERATOR, STOVE, "burning")
        for _ in range(10):
            await service.tick()
    finally:
        await engine.store.close()
