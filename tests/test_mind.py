"""The mind's parts pinned with a scripted model: reflection threshold and evidence, reacting
and replanning, dialogue and what it leaves behind, the summary cache, interviews that write
nothing, ablations, learning places and refusals."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

import pytest
from scripted import ScriptedModel

from townbot.llm.stack import build_model_stack
from townbot.mind import dialogue, reacting
from townbot.mind.agent import AgentMind, Perception, starting_knowledge
from townbot.mind.answering import answer_as
from townbot.mind.memory import MemoryStream
from townbot.mind.reacting import Sighting
from townbot.mind.settings import MindSettings
from townbot.mind.state import MindState, PlaceKnowledge

MORNING = datetime(2023, 2, 13, 9, 0)


class OpenWorld:
    """The WorldView protocol over the real world data, with chosen places refused."""

    def __init__(self, world, refused: dict[tuple[str, str | None], str] | None = None):
        self.world = world
        self.refused = refused or {}

    def availability(self, person, sector, arena):
        return self.refused.get((sector, arena)) or self.refused.get((sector, None))

    def arenas_of(self, sector):
        return list(self.world.sectors[sector].arenas)

    def objects_in(self, sector, arena):
        return list(self.world.arena(sector, arena).objects)

    def norms_of(self, sector):
        return " ".join(self.world.sectors[sector].norms)


def make_mind(world, name: str, model, settings: MindSettings | None = None) -> AgentMind:
    persona = world.personas[name]
    arenas = {s: list(v.arenas) for s, v in world.sectors.items()}
    return AgentMind(persona, model, MemoryStream(256),
                     MindState(places=PlaceKnowledge(starting_knowledge(persona, arenas))), settings)


async def started(mind: AgentMind, now: datetime = MORNING) -> AgentMind:
    """A mind with its seed memories, that has planned the day."""
    mind._step_time = now  # the step a test stands in
    for text in mind.persona.seed_memories:
        mind.remember("observation", text, when=now - timedelta(hours=1))
    await mind.start_day(now)
    await mind.flush_memories(now, force=True)
    return mind


# --- reflection --------------------------------------------------------------------------


async def test_reflection_waits_for_the_importance_threshold_then_cites_its_evidence(world):
    model = ScriptedModel({
        "importance": lambda r: {"scores": [5] * len(r.context.texts)},
        "reflection_questions": [{"questions": ["What does Klaus care about?"]}],
        "insights": [{"insights": [{"text": "Klaus cares about his research", "evidence": [1, 2]}]}],
    })
    mind = make_mind(world, "Klaus Mueller", model, MindSettings(reflection_threshold=150))
    mind._step_time = MORNING  # the step a test stands in
    for index in range(29):
        mind.remember("observation", f"Klaus Mueller is reading source number {index}")
    await mind.flush_memories(MORNING, force=True)
    assert mind.state.reflection.importance_since_reflection == 145
    await mind._maybe_reflect(MORNING)
    assert not model.asked("reflection_questions"), "145 is below the threshold of 150"

    mind.remember("observation", "Klaus Mueller is reading source number 29")
    await mind.flush_memories(MORNING, force=True)
    await mind._maybe_reflect(MORNING)
    assert len(model.asked("reflection_questions")) == 1
    assert len(model.asked("reflection_questions")[0].context.texts) == 30
    cited = list(model.asked("insights")[0].context.texts[:2])
    reflection = mind.stream.by_kind("reflection")[0]
    assert reflection.text == "Klaus cares about his research"
    assert [mind.stream.memories[i].text for i in reflection.evidence] == cited
    assert mind.state.reflection.importance_since_reflection == 0
    rated = [t for r in model.asked("importance") for t in r.context.texts]
    assert "Klaus cares about his research" in rated, "an unrated insight is scored the usual way"


async def test_an_insight_rated_as_it_is_drawn_needs_no_importance_call(world):
    model = ScriptedModel({
        "importance": lambda r: {"scores": [5] * len(r.context.texts)},
        "reflection_questions": [{"questions": ["What does Klaus care about?"]}],
        "insights": [{"insights": [{"text": "Klaus cares about his research", "evidence": [1],
                                    "importance": 6}]}]})
    mind = make_mind(world, "Klaus Mueller", model, MindSettings(reflection_threshold=150))
    mind._step_time = MORNING
    for index in range(30):
        mind.remember("observation", f"Klaus Mueller is reading source number {index}")
    await mind.flush_memories(MORNING, force=True)
    scored = len(model.asked("importance"))
    await mind._maybe_reflect(MORNING)
    assert len(model.asked("importance")) == scored
    assert [m.importance for m in mind.stream.by_kind("reflection")] == [6]


async def test_reflections_are_retrieved_when_reflecting_again(world):
    model = ScriptedModel({
        "importance": lambda r: {"scores": [8] * len(r.context.texts)},
        "reflection_questions": lambda r: {"questions": ["What is Klaus researching?"]},
        "insights": lambda r: {"insights": [{"text": "Klaus researches gentrification deeply",
                                             "evidence": [1]}]},
    })
    mind = make_mind(world, "Klaus Mueller", model, MindSettings(reflection_threshold=40))
    mind._step_time = MORNING  # the step a test stands in
    for round_ in range(2):
        for index in range(5):
            mind.remember("observation", f"Klaus Mueller researches gentrification {round_} {index}")
        await mind.flush_memories(MORNING, force=True)
        await mind._maybe_reflect(MORNING)
    second = model.asked("insights")[-1].context.texts
    assert "Klaus researches gentrification deeply" in second, "reflections build on reflections"


# --- reacting and replanning ---------------------------------------------------------------


async def test_a_burning_stove_is_dealt_with_and_the_plan_is_rewritten_from_then(world):
    model = ScriptedModel({"react": [{"react": True, "action": "turn off the stove",
                                      "minutes": 15, "object_state": "being turned off",
                                      "emoji": "🧯"}]})
    mind = await started(make_mind(world, "Isabella Rodriguez", model))
    now = MORNING + timedelta(minutes=30)
    stove = "Isabella Rodriguez's apartment: kitchen: stove"
    sighting = Sighting("The stove in the kitchen is burning", "object", stove, "burning")
    decompositions = len(model.asked("decompose"))
    intent = await mind.think(Perception(now, "Isabella Rodriguez's apartment", "kitchen",
                                         [sighting]), OpenWorld(world))
    assert (intent.action, intent.object, intent.object_state) == (
        "turning off the stove", "stove", "being turned off")
    resumed = mind.current_block(now + timedelta(minutes=15))
    assert resumed is not None and resumed.start == now + timedelta(minutes=15)
    assert resumed.steps == [], "what the reaction displaced is planned again when it resumes"
    await mind.think(Perception(now + timedelta(minutes=20), "Isabella Rodriguez's apartment",
                                "kitchen"), OpenWorld(world))
    redone = model.asked("decompose")[decompositions:]
    assert redone and redone[-1].context.start == now + timedelta(minutes=20)


async def test_nobody_reacts_to_an_object_someone_is_using(world):
    model = ScriptedModel({"react": [{"react": True, "action": "x"}]})
    mind = await started(make_mind(world, "Isabella Rodriguez", model))
    sighting = Sighting("The stove in the kitchen is cooking", "object",
                        "Isabella Rodriguez's apartment: kitchen: stove", "cooking", attended=True)
    await mind.think(Perception(MORNING, "Isabella Rodriguez's apartment", "kitchen", [sighting]),
                     OpenWorld(world))
    assert not model.asked("react")


async def test_sleeping_people_are_not_talked_to_and_a_pair_waits_out_its_cooldown(world):
    model = ScriptedModel({"react": lambda r: {"react": True, "action": "chat"}})
    mind = await started(make_mind(world, "Klaus Mueller", model))
    asleep = Sighting("Maria Lopez is sleeping", "agent", "Maria Lopez", "sleeping",
                      available=False)
    intent = await mind.think(Perception(MORNING, "Oak Hill College", "library", [asleep]),
                              OpenWorld(world))
    assert intent.talk_to is None and not model.asked("react")

    awake = Sighting("Maria Lopez is reading", "agent", "Maria Lopez", "reading")
    intent = await mind.think(Perception(MORNING + timedelta(minutes=10), "Oak Hill College",
                                         "library", [awake]), OpenWorld(world))
    assert intent.talk_to == "Maria Lopez"
    later = Sighting("Maria Lopez is writing", "agent", "Maria Lopez", "writing")
    intent = await mind.think(Perception(MORNING + timedelta(hours=1), "Oak Hill College",
                                         "library", [later]), OpenWorld(world))
    assert intent.talk_to is None, "within the cooldown the same pair does not talk again"


async def test_an_invitation_heard_at_2_pm_changes_the_plan_that_afternoon(world):
    invitation = ("Isabella Rodriguez is hosting a Valentine's Day party at Hobbs Cafe on "
                  "February 13, from 5 pm to 7 pm (heard from Isabella Rodriguez)")
    model = ScriptedModel({
        "takeaways": [{"learned": [{"name": "Klaus Mueller", "facts": [invitation]}]}],
        "revise_plan": [{"revise": True, "reason": "go to the party at Hobbs Cafe at 5 pm"}]})
    klaus = await started(make_mind(world, "Klaus Mueller", model))
    assert "party" not in klaus.current_block(MORNING + timedelta(hours=8, minutes=30)).activity
    two = MORNING + timedelta(hours=5)
    lines = [("Isabella Rodriguez", "Come to my party at five!"), ("Klaus Mueller", "I will!")]
    await klaus.after_conversation("Isabella Rodriguez", lines, "Hobbs Cafe: cafe", two,
                                   two + timedelta(minutes=5), "Hobbs Cafe", "cafe")
    asked = model.asked("revise_plan")[0]
    assert invitation in asked.prompt and "2:05 pm" in asked.prompt, "the news, from now on"
    evening = klaus.current_block(MORNING + timedelta(hours=8, minutes=30))
    assert "Valentine's Day party" in evening.activity, "the same afternoon, not tomorrow"
    assert klaus.current_block(two).activity == "talking with Isabella Rodriguez"
    await klaus.flush_memories(two)
    assert any("changed plans at 2:05 pm" in m.text for m in klaus.stream.by_kind("plan"))


async def test_news_that_does_not_bear_on_today_leaves_the_plan_alone(world):
    model = ScriptedModel({"takeaways": [{"learned": [{"name": "Klaus Mueller",
                                                       "facts": ["Tom Moreno is growing tomatoes"]}]}],
                           "revise_plan": [{"revise": False}]})
    klaus = await started(make_mind(world, "Klaus Mueller", model))
    before = [(b.start, b.activity) for b in klaus.state.planning.blocks]
    two = MORNING + timedelta(hours=5)
    await klaus.after_conversation("Tom Moreno", [("Tom Moreno", "Tomatoes!")], "x", two,
                                   two + timedelta(minutes=5), "Hobbs Cafe", "cafe")
    after = [(b.start, b.activity) for b in klaus.state.planning.blocks
             if not b.activity.startswith("talking with")]
    assert len(model.asked("revise_plan")) == 1
    assert {a for _, a in after} == {a for _, a in before}, "only the talk was cut in"


async def test_a_memory_made_this_tick_is_retrievable_this_tick(world):
    model = ScriptedModel({"react": lambda r: {"react": False}, "importance": lambda r: {
        "scores": [8 if "torches" in t else 2 for t in r.context.texts]}})
    klaus = await started(make_mind(world, "Klaus Mueller", model))
    now = MORNING + timedelta(minutes=10)
    klaus.state.queue.last_scored = now  # the next scoring batch is not due yet
    sight = "Maria Lopez is juggling flaming torches"
    before = klaus.state.reflection.importance_since_reflection
    await klaus.think(Perception(now, "Oak Hill College", "library",
                                 [Sighting(sight, "agent", "Maria Lopez", "juggling")]),
                      OpenWorld(world))
    assert sight in model.asked("react")[0].context.memories, "seen and recalled at once"
    memory = klaus.stream.latest_with(sight)
    assert memory.importance == 3 and memory.id in klaus.state.queue.unscored, "provisional"
    assert klaus.state.reflection.importance_since_reflection == before, "counted only once scored"
    await klaus.flush_memories(now, force=True)
    assert memory.importance == 8 and not klaus.state.queue.unscored
    assert klaus.state.reflection.importance_since_reflection >= before + 8


async def test_an_unchanged_sight_adds_no_memory_and_refreshes_the_one_it_has(world):
    model = ScriptedModel()
    klaus = await started(make_mind(world, "Klaus Mueller", model))
    desk = Sighting("The computer desk in the library is on", "object",
                    "Oak Hill College: library: computer desk", "on", attended=True)
    for minutes in (10, 20, 30, 40):
        await klaus.think(Perception(MORNING + timedelta(minutes=minutes), "Oak Hill College",
                                     "library", [desk]), OpenWorld(world))
    kept = [m for m in klaus.stream.memories if m.text == desk.text]
    assert len(kept) == 1 and kept[0].last_accessed == MORNING + timedelta(minutes=40)
    changed = Sighting("The computer desk in the library is off", "object", desk.subject, "off")
    await klaus.think(Perception(MORNING + timedelta(minutes=50), "Oak Hill College", "library",
                                 [changed]), OpenWorld(world))
    assert klaus.stream.latest_with(changed.text) is not None, "a change is a new memory"


async def test_waiting_for_someone_puts_a_short_wait_in_the_plan(world):
    model = ScriptedModel({"react": [{"react": False, "wait": True, "minutes": 10}]})
    klaus = await started(make_mind(world, "Klaus Mueller", model))
    now = MORNING + timedelta(minutes=10)
    busy = Sighting("Maria Lopez is using the computer desk", "agent", "Maria Lopez", "using it")
    intent = await klaus.think(Perception(now, "Oak Hill College", "library", [busy]),
                               OpenWorld(world))
    assert intent.talk_to is None and intent.action.startswith("waiting for Maria Lopez")
    assert klaus.current_block(now + timedelta(minutes=10)).start == now + timedelta(minutes=10)


# --- dialogue --------------------------------------------------------------------------------


async def test_a_conversation_alternates_and_ends_when_a_speaker_ends_it(world):
    lines = iter([{"text": "Hi Maria!", "end": False}, {"text": "Hi Klaus, busy?", "end": False},
                  {"text": "Always. Bye!", "end": True}])
    model = ScriptedModel({"utterance": lambda r: next(lines)})
    klaus, maria = make_mind(world, "Klaus Mueller", model), make_mind(world, "Maria Lopez", model)
    talk = await dialogue.converse_by_lines(model, klaus.voice("reading"), maria.voice("writing"),
                                            MORNING, "Oak Hill College: library", 8, 5)
    assert talk == [("Klaus Mueller", "Hi Maria!"), ("Maria Lopez", "Hi Klaus, busy?"),
                    ("Klaus Mueller", "Always. Bye!")]
    history = model.asked("utterance")[2].context.history
    assert list(history) == talk[:2], "each line sees the conversation so far"


async def test_a_conversation_stops_at_the_turn_cap(world):
    model = ScriptedModel({"utterance": lambda r: {"text": "And another thing...", "end": False}})
    a, b = make_mind(world, "Tom Moreno", model), make_mind(world, "John Lin", model)
    talk = await dialogue.converse_by_lines(model, a.voice(""), b.voice(""), MORNING, "x", 4, 5)
    assert len(talk) == 4


async def test_each_line_knows_the_listener_the_date_and_the_speakers_own_action(world):
    model = ScriptedModel({
        "relationship": lambda r: {"text": "Maria has a quiet crush on Klaus; they share a dorm."},
        "utterance": lambda r: {"text": "Hi Klaus!", "end": len(r.context.history) >= 1}})
    maria = await started(make_mind(world, "Maria Lopez", model))
    klaus = await started(make_mind(world, "Klaus Mueller", model))
    await dialogue.converse_by_lines(model, maria.voice("studying physics"),
                                     klaus.voice("reading"), MORNING, "Hobbs Cafe: cafe", 8, 30)
    asked = model.asked("relationship")[0]
    assert asked.agent == "Maria Lopez" and "Klaus Mueller" in asked.prompt
    assert any("crush on Klaus" in m for m in asked.context.memories), "from her memories"
    first = model.asked("utterance")[0].prompt
    assert "Maria has a quiet crush on Klaus; they share a dorm." in first
    assert "Monday February 13, 2023, 9:00 am" in first, "the date, so 'February 14' is tomorrow"
    assert "Maria was studying physics" in first and "Klaus Mueller, who is reading" in first
    speakers = [r.agent for r in model.asked("relationship")]
    assert sorted(speakers) == ["Klaus Mueller", "Maria Lopez"], "once per speaker per talk"


async def test_a_stranger_is_not_summarised_and_is_greeted_as_one(world):
    model = ScriptedModel()
    abigail = await started(make_mind(world, "Abigail Chen", model))
    klaus = await started(make_mind(world, "Klaus Mueller", model))
    lines = await dialogue.converse_by_lines(model, abigail.voice("drawing"),
                                             klaus.voice("reading"), MORNING, "x", 2, 30)
    assert not [r for r in model.asked("relationship") if r.agent == "Abigail Chen"]
    assert "Abigail does not know Klaus Mueller yet." in model.asked("utterance")[0].prompt
    assert "I'm Abigail" in lines[0][1] and "Klaus" not in lines[0][1]  # introduces herself


async def test_news_told_to_one_listener_is_still_told_to_the_next(world):
    model = ScriptedModel()
    isabella = await started(make_mind(world, "Isabella Rodriguez", model))
    for listener in ("Klaus Mueller", "Maria Lopez"):
        other = await started(make_mind(world, listener, model))
        lines = await dialogue.converse_by_lines(model, isabella.voice("serving coffee"),
                                                 other.voice("having coffee"), MORNING,
                                                 "Hobbs Cafe: cafe", 8, 30)
        said = [t for s, t in lines if s == "Isabella Rodriguez"]
        assert any("Valentine" in t for t in said), (listener, lines)
        isabella.state.dialogue.told[listener] = said
    again = await dialogue.converse_by_lines(model, isabella.voice("serving coffee"),
                                             other.voice("having coffee"), MORNING,
                                             "Hobbs Cafe: cafe", 8, 30)
    assert not any("Valentine" in t for s, t in again if s == "Isabella Rodriguez"), \
        "the same listener is not told twice"


async def test_the_decision_to_talk_knows_when_they_last_talked_and_about_what(world):
    model = ScriptedModel({
        "react": lambda r: {"react": False, "wait": True, "minutes": 10},
        "takeaways": lambda r: {"learned": [{"name": "Klaus Mueller", "facts": [
            "Maria Lopez is studying for a physics exam (heard from Maria Lopez)"]}]}})
    klaus = await started(make_mind(world, "Klaus Mueller", model))
    lines = [("Klaus Mueller", "Hi!"), ("Maria Lopez", "I have a physics exam on Friday")]
    await klaus.after_conversation("Maria Lopez", lines, "Oak Hill College: library", MORNING,
                                   MORNING + timedelta(minutes=5), "Oak Hill College", "library")
    klaus.state.reacting.last_talked.clear()
    later = MORNING + timedelta(hours=3)
    sighting = Sighting("Maria Lopez is reading", "agent", "Maria Lopez", "reading")
    decision = await reacting.decide(model, klaus.name, klaus.summary_text, klaus.stream, later,
                                     "reading", sighting, MindSettings())
    prompt = model.asked("react")[0].prompt
    assert "Klaus last talked with Maria Lopez on Monday February 13 at 9:00 am" in prompt
    assert "studying for a physics exam" in prompt
    assert '"wait": true' in prompt and decision.wait


async def test_after_a_conversation_both_remember_it_and_what_they_learned(world):
    model = ScriptedModel({"takeaways": lambda r: {"learned": [
        {"name": r.context.names[0], "facts": ["Maria Lopez is throwing a party on Friday"]}]}})
    klaus = await started(make_mind(world, "Klaus Mueller", model))
    lines = [("Klaus Mueller", "Hi!"), ("Maria Lopez", "I'm throwing a party on Friday")]
    end = MORNING + timedelta(minutes=5)
    await klaus.after_conversation("Maria Lopez", lines, "Oak Hill College: library", MORNING,
                                   end, "Oak Hill College", "library")
    talks = [m.text for m in klaus.stream.by_kind("conversation")]
    assert any("talked with Maria Lopez" in t and "party on Friday" in t for t in talks)
    assert "Maria Lopez is throwing a party on Friday" in talks
    assert klaus.current_block(MORNING).activity == "talking with Maria Lopez"
    assert klaus.state.reacting.last_talked["Maria Lopez"] == datetime(2023, 2, 13, 9, 0)


# --- summary, interviews and ablations ----------------------------------------------------


async def test_the_summary_is_cached_and_refreshed_a_few_times_a_day(world):
    model = ScriptedModel({"summary": lambda r: {"core": "kind", "occupation": "cafe owner",
                                                 "feeling": "hopeful"}})
    mind = await started(make_mind(world, "Isabella Rodriguez", model))
    queries = model.asked("summary")[0].prompt
    assert "character" in queries and "occupation" in queries and "progress" in queries
    assert "cafe owner" in mind.summary_text
    for hours in (1, 2, 3):
        await mind.think(Perception(MORNING + timedelta(hours=hours), None, None),
                         OpenWorld(world))
    assert len(model.asked("summary")) == 1
    await mind.think(Perception(MORNING + timedelta(hours=9), None, None), OpenWorld(world))
    assert len(model.asked("summary")) == 2


async def test_an_interview_answers_from_memory_and_writes_nothing(world):
    model = ScriptedModel()
    mind = await started(make_mind(world, "Sam Moore", model))
    before = [(m.id, m.last_accessed) for m in mind.stream.memories]
    reply = await answer_as(model, mind.persona, mind.summary_text, mind.stream,
                            "Are you running for mayor?", MORNING, asker="a reporter")
    assert "mayor" in reply.lower()
    assert [(m.id, m.last_accessed) for m in mind.stream.memories] == before
    assert mind.state.queue.pending == []
    asked = model.asked("answer")[0]
    assert "a reporter" in asked.prompt and '"Are you running for mayor?"' in asked.prompt


@pytest.mark.parametrize("question", ["Are you an AI?", "Is this a computer program?"])
async def test_residents_do_not_deny_being_simulated(world, question):
    model = ScriptedModel()
    mind = await started(make_mind(world, "John Lin", model))
    reply = await answer_as(model, mind.persona, mind.summary_text, mind.stream, question, MORNING)
    assert "simulated" in reply or "computer program" in reply


# --- acting ---------------------------------------------------------------------------------


async def test_agents_learn_the_places_they_see(world):
    mind = await started(make_mind(world, "Klaus Mueller", ScriptedModel()))
    unknown = next(s for s in world.sectors if s not in mind.state.places.known)
    arena = next(iter(world.sectors[unknown].arenas))
    await mind.think(Perception(MORNING, unknown, arena), OpenWorld(world))
    assert mind.state.places.known[unknown] == list(world.sectors[unknown].arenas)


async def test_a_place_known_in_part_or_in_another_order_learns_only_what_is_missing(world):
    mind = await started(make_mind(world, "Klaus Mueller", ScriptedModel()))
    sector = next(s for s in world.sectors if len(world.sectors[s].arenas) >= 3)
    arenas = list(world.sectors[sector].arenas)
    for known, learned in ((arenas[::-1], arenas[::-1]),  # all known: the order kept
                           ([arenas[2], arenas[0]], [arenas[2], arenas[0], *arenas[1:2], *arenas[3:]]),
                           (list(arenas), list(arenas))):
        mind.state.places.known[sector] = list(known)
        mind.state.places.dirty = False
        mind.observe(Perception(MORNING, sector, arenas[0]), OpenWorld(world))
        assert mind.state.places.known[sector] == learned
        assert mind.state.places.dirty == (learned != known)


async def test_a_refused_place_is_asked_again_then_replaced(world):
    willows = "The Willows Market and Pharmacy"
    scripted = ScriptedModel({"choose_place": lambda r: {"place": willows, "area": "pharmacy"}})
    model = build_model_stack(scripted)  # as in the engine: the check, one repair, then the default
    mind = await started(make_mind(world, "John Lin", model), MORNING)
    view = OpenWorld(world, {(willows, None): f"{willows} is closed now"})
    await mind.think(Perception(MORNING + timedelta(hours=1), "Lin family's house", "kitchen"), view)
    block = mind.current_block(MORNING + timedelta(hours=1))
    assert block.sector != willows, "a closed shop is not where the plan goes"
    assert len(scripted.asked("choose_place")) == 2, "asked once, then once more"
    assert "closed" in scripted.asked("choose_place")[1].prompt


async def test_takeaways_scored_with_the_talk_need_no_importance_call(world):
    model = ScriptedModel({"takeaways": [{"learned": [
        {"name": "Klaus Mueller", "scores": [8], "importance": 5,
         "facts": ["Maria Lopez is throwing a party on Friday (heard from Maria Lopez)"]}]},
        {"learned": [{"name": "Klaus Mueller", "scores": [3, 4],
                      "facts": ["Maria Lopez is tired (heard from Maria Lopez)"]}]}]})
    klaus = await started(make_mind(world, "Klaus Mueller", model))
    lines = [("Klaus Mueller", "Hi!"), ("Maria Lopez", "I'm throwing a party on Friday")]
    asked_before = len(model.asked("importance"))
    await klaus.after_conversation("Maria Lopez", lines, "Oak Hill College: library", MORNING,
                                   MORNING + timedelta(minutes=5), "Oak Hill College", "library")
    assert len(model.asked("importance")) == asked_before, "scored with the takeaways"
    scores = {m.text: m.importance for m in klaus.stream.by_kind("conversation")}
    assert scores["Maria Lopez is throwing a party on Friday (heard from Maria Lopez)"] == 8
    assert [s for t, s in scores.items() if "talked with" in t] == [5]

    later = MORNING + timedelta(hours=5)
    await klaus.after_conversation("Maria Lopez", lines, "Oak Hill College: library", later,
                                   later + timedelta(minutes=5), "Oak Hill College", "library")
    rated = model.asked("importance")[-1].context.texts
    assert "Maria Lopez is tired (heard from Maria Lopez)" in rated, \
        "two scores for one fact: scored the usual way, at once"


async def test_a_block_goes_where_the_schedule_put_it_unless_it_is_closed_or_unknown(world):
    cafe, market = "Hobbs Cafe", "The Willows Market and Pharmacy"
    scripted = ScriptedModel({"hourly_schedule": [{"blocks": [
        {"start": "08:00", "minutes": 60, "activity": "have coffee", "place": f"{cafe}: cafe"},
        {"start": "09:00", "minutes": 60, "activity": "buy medicine",
         "place": f"{market}: pharmacy"},
        {"start": "10:00", "minutes": 60, "activity": "read", "place": ""},
        {"start": "11:00", "minutes": 600, "activity": "go to bed", "place": ""}]}]})
    mind = make_mind(world, "John Lin", build_model_stack(scripted))
    mind.state.places.known.setdefault(cafe, list(world.sectors[cafe].arenas))
    mind.state.places.known.setdefault(market, list(world.sectors[market].arenas))
    await started(mind, MORNING - timedelta(hours=1))
    here = Perception(MORNING - timedelta(hours=1), "Lin family's house", "kitchen")
    intent = await mind.think(here, OpenWorld(world))
    assert (intent.sector, intent.arena) == (cafe, "cafe") and not scripted.asked("choose_place")

    closed = OpenWorld(world, {(market, None): f"{market} is closed now"})
    intent = await mind.think(Perception(MORNING, cafe, "cafe"), closed)
    assert intent.sector != market and scripted.asked("choose_place"), \
        "a planned place that is closed when the block begins is chosen again"

    asked = len(scripted.asked("choose_place"))
    await mind.think(Perception(MORNING + timedelta(hours=1), cafe, "cafe"), OpenWorld(world))
    assert len(scripted.asked("choose_place")) == asked + 1, "a block without a place is chosen when due"


async def test_a_memory_queued_while_others_are_stored_is_kept_for_the_next_flush(world):
    import asyncio

    class SlowEmbedding(ScriptedModel):
        def __init__(self) -> None:
            super().__init__()
            self.release = asyncio.Event()

        async def embed(self, texts, call=None):
            await self.release.wait()
            return await super().embed(texts, call)

    model = SlowEmbedding()
    mind = make_mind(world, "Klaus Mueller", model)
    mind._step_time = MORNING
    mind.remember("observation", "Klaus Mueller is reading")
    flushing = asyncio.ensure_future(mind.flush_memories(MORNING))
    await asyncio.sleep(0)
    mind.remember("thought", "Klaus Mueller wants more coffee")  # while the first is embedded
    model.release.set()
    await flushing
    assert [m.text for m in mind.stream.memories] == ["Klaus Mueller is reading"]
    await mind.flush_memories(MORNING)
    assert mind.stream.memories[-1].text == "Klaus Mueller wants more coffee"


async def test_small_talk_rated_low_does_not_make_the_plan_look_again(world):
    model = ScriptedModel({"takeaways": [{"learned": [
        {"name": "Klaus Mueller", "scores": [3], "importance": 3,
         "facts": ["Maria Lopez is tired (heard from Maria Lopez)"]}]},
        {"learned": [{"name": "Klaus Mueller", "scores": [8], "importance": 8,
                      "facts": ["Maria Lopez is hosting a party at 5 pm (heard from Maria Lopez)"]}]}]})
    klaus = await started(make_mind(world, "Klaus Mueller", model))
    lines = [("Klaus Mueller", "Hi!"), ("Maria Lopez", "I'm tired")]
    await klaus.after_conversation("Maria Lopez", lines, "Oak Hill College: library", MORNING,
                                   MORNING + timedelta(minutes=5), "Oak Hill College", "library")
    assert not model.asked("revise_plan")
    later = MORNING + timedelta(hours=5)
    await klaus.after_conversation("Maria Lopez", lines, "Oak Hill College: library", later,
                                   later + timedelta(minutes=5), "Oak Hill College", "library")
    assert model.asked("revise_plan")[0].context.news == (
        "Maria Lopez is hosting a party at 5 pm (heard from Maria Lopez)",)



async def test_both_participants_share_one_takeaways_call(world):
    model = ScriptedModel()
    klaus = await started(make_mind(world, "Klaus Mueller", model))
    maria = await started(make_mind(world, "Maria Lopez", model))
    lines = [("Klaus Mueller", "Hi!"), ("Maria Lopez", "Have you heard? Isabella Rodriguez "
                                        "intends to host a Valentine's Day party.")]
    shared = dialogue.JointTakeaways(model, ["Klaus Mueller", "Maria Lopez"], lines)
    end = MORNING + timedelta(minutes=5)
    await asyncio.gather(*(mind.after_conversation(partner, lines, "Hobbs Cafe: cafe", MORNING, end,
                                                   "Hobbs Cafe", "cafe", shared)
                           for mind, partner in ((klaus, "Maria Lopez"), (maria, "Klaus Mueller"))))
    assert len(model.asked("takeaways")) == 1
    assert any("party" in m.text and "(heard from Maria Lopez)" in m.text
               for m in klaus.stream.by_kind("conversation"))
    assert not any("(heard from" in m.text for m in maria.stream.by_kind("conversation"))
