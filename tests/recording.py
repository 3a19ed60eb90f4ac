"""The offline model keeping every prompt it is sent: tests read the prompts actually sent."""

from __future__ import annotations

from townbot.llm.offline import OfflineModel


class Recording(OfflineModel):
    def __init__(self) -> None:
        super().__init__(seed=0)
        self.prompts: list[tuple[str, str]] = []

    async def ask(self, request):
        self.prompts.append((request.purpose, request.prompt))
        return await super().ask(request)
