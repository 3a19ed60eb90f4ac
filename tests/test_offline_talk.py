"""The offline model's words (issue 32): conversations that fit who, where and what the speaker
knows; interview answers by the question's kind; verb forms from the inflection table; the
same seed, the same words."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime

import pytest

from townbot.llm.offline import news, talk
from townbot.llm.offline.model import OfflineModel
from townbot.llm.offline.words import alternatives, banks, base_form, third_singular
from townbot.llm.purposes.answer import AnswerQuestion
from townbot.llm.purposes.common import Recalled
from townbot.llm.purposes.importance import score_importance
from townbot.llm.purposes.utterance import Utterance, UtteranceQuestion
from townbot.wording import progressive

PARTY = Recalled("Isabella Rodriguez intends to host a Valentine's Day party at Hobbs Cafe on "
                 "February 14, from 5 pm until 7 pm. (heard from Jane Moreno)", 8, "conversation")
KNOWS = "Maria knows Klaus Mueller."


def line(speaker: str, partner: str, history=(), memories=(), **more) -> Utterance:
    context = {"speaker": speaker, "partner": partner, "history": list(history),
               "memories": list(memories), "already_said": [], "relationship": KNOWS,
               "moment": "Monday February 13, 2023, 9:00 am", **more}
    return UtteranceQuestion(**context).offline(seed=0)


def answered(context: dict) -> str:
    """The offline interview answer to the question in `context` (the answer question's
    fields), asked on a Monday morning."""
    return AnswerQuestion(now=datetime(2023, 2, 13, 9, 0), **context).offline(seed=0).text


def test_a_stranger_introduces_herself_and_a_friend_is_greeted_by_name():
    stranger = line("Abigail Chen", "Klaus Mueller", relationship="Abigail does not know Klaus.")
    assert "I'm Abigail" in stranger.text and not stranger.end
    friend = line("Maria Lopez", "Klaus Mueller")
    assert "Klaus" in friend.text and "I'm Maria" not in friend.text


def test_at_the_party_guests_talk_about_it_and_nobody_is_invited_to_it():
    at_party = {"speaker_action": "trying the food at the Valentine's Day party",
                "partner_action": "dancing with the other guests"}
    opening = line("Maria Lopez", "Klaus Mueller", memories=[PARTY], **at_party)
    assert opening.text in {t.format(partner="Klaus", host="Isabella", guest="")
                            for t in alternatives("party_talk")} or "Isabella" in opening.text
    history = [("Maria Lopez", opening.text), ("Klaus Mueller", "It really is, Maria.")]
    later = line("Maria Lopez", "Klaus Mueller", history, [PARTY], **at_party)
    assert "5 pm" not in later.text and "coming to" not in later.text


def test_a_party_is_asked_about_before_it_is_told_and_a_yes_ends_the_telling():
    history = [("Maria Lopez", "Hi Klaus!"), ("Klaus Mueller", "Good, thanks, Maria.")]
    asked = line("Maria Lopez", "Klaus Mueller", history, [PARTY])
    assert "Isabella's Valentine's Day party" in asked.text and asked.text.endswith("?")
    history.append(("Maria Lopez", asked.text))
    told_yes = line("Maria Lopez", "Klaus Mueller",
                    [*history, ("Klaus Mueller", "I know, Maria, I'm looking forward to it.")],
                    [PARTY])
    assert "5 pm" not in told_yes.text
    told_no = line("Maria Lopez", "Klaus Mueller",
                   [*history, ("Klaus Mueller", "No, Maria - what's that about?")], [PARTY])
    assert "from 5 pm until 7 pm" in told_no.text


def test_news_one_knew_is_met_with_where_it_came_from_never_with_surprise():
    heard = Recalled("Sam Moore intends to run for mayor. (heard from Tom Moreno)", 8,
                     "conversation")
    history = [("Klaus Mueller", "Hi Maria!"),
               ("Maria Lopez", "Fine. Have you heard? Sam Moore intends to run for mayor.")]
    reply = line("Klaus Mueller", "Maria Lopez", history, [heard],
                 relationship="Klaus knows Maria.")
    assert "Tom" in reply.text or "heard" in reply.text.lower()
    assert "news to me" not in reply.text and "no idea" not in reply.text.lower()


def test_a_talk_ends_for_a_reason_and_not_after_the_greeting():
    history = [("Maria Lopez", "Hi Klaus!")]
    second = line("Klaus Mueller", "Maria Lopez", history, speaker_action="reading a book",
                  relationship="Klaus knows Maria.")
    assert not second.end
    history += [("Klaus Mueller", second.text), ("Maria Lopez", "Good to know."),
                ("Klaus Mueller", "Interesting, Maria!")]
    last = line("Maria Lopez", "Klaus Mueller", history, speaker_action="studying physics")
    assert last.end and "studying physics" in last.text


def test_the_takeaways_are_the_news_whole_after_any_opener():
    for template in alternatives("share_news"):
        said = template.format(partner="Tom", news="Sam Moore intends to run for mayor.")
        facts = news.passed_on([("Jane Moreno", said)], "Jane Moreno", "they", score_importance)
        assert facts == ["Sam Moore intends to run for mayor. (heard from Jane Moreno)"], said


@pytest.mark.parametrize(("plan", "doing"), [
    ("host the evening, pour drinks and introduce the performers",
     "hosting the evening, pouring drinks and introducing the performers"),
    ("teach the morning lecture", "teaching the morning lecture"),
    ("weed and plant the vegetable beds", "weeding and planting the vegetable beds"),
    ("jump out of bed and rush to get ready", "jumping out of bed and rushing to get ready"),
    ("keep writing over a cup of tea", "still writing over a cup of tea"),
    ("still watering the plants", "still watering the plants"),
])
def test_verb_forms_come_from_the_inflection_table(plan, doing):
    assert progressive(plan) == doing


def test_first_and_third_person_forms_from_the_table():
    assert base_form("watches") == "watch" and base_form("intends") == "intend"
    assert base_form("tries") == "try" and third_singular("wonder") == "wonders"


def test_interviews_answer_by_the_question_s_kind():
    context = {"name": "Klaus Mueller", "background": "Klaus Mueller is a sociology student "
               "at Oak Hill College. He lives in the college dorm.",
               "summary": "Name: Klaus Mueller (age 20). Innate traits: earnest, kind. "
               "He is writing a paper on gentrification.",
               "plan": ["8:00 am to 12:00 pm: work on his research paper (Oak Hill College)",
                        "12:00 pm to 1:00 pm: eat lunch (Hobbs Cafe)"],
               "memories": ["Maria Lopez is studying physics at the library",
                            "Maria Lopez is studying physics at the library",
                            "Sam Moore intends to run for mayor. (heard from Maria Lopez)"]}

    def ask(question: str) -> str:
        return answered({**context, "question": question})

    assert "sociology student" in ask("What do you do for work?")
    assert "research paper" in ask("What will you be doing at 9 am today?")
    assert "asleep" in ask("What will you be doing at 6 am today?")
    assert "Sam Moore" in ask("Do you know who is running for mayor?")
    assert "physics" in ask("If you were getting Maria Lopez a birthday present, what would it be?")
    assert "don't know" in ask("Is there a Valentine's Day party coming up?").lower() \
        or "not that i know" in ask("Is there a Valentine's Day party coming up?").lower()
    assert "stove" in ask("Your breakfast is on fire! What do you do?")
    assert "talked with" not in ask("Who is Maria Lopez?")
    answers = {ask(q) for q in ("Tell me about yourself.", "What do you do for work?",
                                "What are you really into these days?")}
    assert len(answers) == 3, "different questions, different answers"


async def test_the_same_seed_gives_the_same_words_and_the_banks_load():
    assert all(banks().values())
    first, second = OfflineModel(seed=3), OfflineModel(seed=3)
    context = {"speaker": "Maria Lopez", "partner": "Klaus Mueller", "history": [],
               "memories": [], "already_said": [], "relationship": KNOWS, "moment": "x"}
    question = UtteranceQuestion(**context)
    assert await first.ask(question.ask()) == await second.ask(question.ask())


def test_news_from_a_remembered_talk_is_never_put_in_the_other_s_mouth():
    remembered = Recalled("Jane Moreno talked with Hailey Johnson at Hobbs Cafe: cafe. Hailey: "
                          "Good, thanks. Jane: I wanted to tell you: I intend to host a party at "
                          "Hobbs Cafe on February 14, from 5 pm until 7 pm. Hailey: Count me in!",
                          8, "conversation")
    assert news.news_of(remembered, score_importance) is None  # Jane's news, not Hailey's
    remembered = replace(remembered, text=remembered.text.replace(
        "Hailey: Good, thanks. Jane: I wanted to tell you: I intend",
        "Hailey: Good, thanks. Guess what I heard, Jane: Isabella Rodriguez intends"))
    content, source = news.news_of(remembered, score_importance)
    assert content.startswith("Isabella Rodriguez intends to host") and source == "Hailey Johnson"


def test_every_phrase_bank_says_something_even_with_its_slots_unfilled():
    from townbot.llm.offline.words import say

    for bank in banks():
        assert isinstance(say(bank, 0, "any key"), str), bank  # never a missing-slot error
        filled = say(bank, 0, "any key", **{slot: "x" for slot in (
            "partner", "me", "doing", "place", "news", "host", "event", "guest", "memory",
            "source", "who", "fact", "trait", "time", "start", "end", "interest", "feeling")})
        assert filled.strip() and "{" not in filled, bank


def test_what_the_speaker_knows_beyond_this_lines_memories_is_never_asked_or_passed_back():
    """`known` (what the mind knows of the news, beside the memories retrieved for the line):
    asked about a party it knows of, the speaker does not claim never to have heard of it; news
    that came from the listener is not told back to them, even when it was heard again since."""
    asked = [("Maria Lopez", "Hi Klaus!"), ("Klaus Mueller", "Good, thanks, Maria."),
             ("Maria Lopez", "Are you going to Isabella's Valentine's Day party, Klaus?")]
    unaware = line("Klaus Mueller", "Maria Lopez", asked)
    assert unaware.text in {t.format(partner="Maria") for t in alternatives("not_heard_of_it")}
    aware = line("Klaus Mueller", "Maria Lopez", asked, known=[PARTY])
    assert aware.text in {t.format(partner="Maria") for t in alternatives("already_going")}

    news = "Sam Moore intends to run for mayor in Smallville's coming local election."
    again = Recalled(f"{news} (heard from Tom Moreno)", 8, "conversation")
    first = Recalled(f"{news} (heard from Jennifer Moore)", 8, "conversation")
    greeted = [("Klaus Mueller", "Hi Jennifer!"), ("Jennifer Moore", "Hello, Klaus.")]
    assert news in line("Klaus Mueller", "Jennifer Moore", greeted, [again]).text
    told = line("Klaus Mueller", "Jennifer Moore", greeted, [again], known=[first]).text
    assert news not in told


def ask(question: str, **context) -> str:
    return answered({"name": "Klaus Mueller", "question": question, "memories": [],
                             **context})


def test_a_gift_for_a_friend_comes_from_what_one_remembers_of_them_not_only_what_was_retrieved():
    question = "If you were getting Ayesha Khan a birthday present, what would it be?"
    assert "don't know" in ask(question) or "not sure" in ask(question)
    seen = ["Ayesha Khan is writing a chapter of her thesis"] * 3 + [
        "Ayesha Khan is getting the hang of it", "Ayesha Khan is eating lunch"]
    answer = ask(question, about_people={"Ayesha Khan": seen})
    assert "thesis" in answer and "hang" not in answer and "lunch" not in answer


def test_who_lives_with_me_comes_from_the_home_and_the_people_met_there():
    question = "Who lives with you?"
    alone = answered({"name": "Isabella Rodriguez", "question": question,
                              "memories": [], "home": "Isabella Rodriguez's apartment"})
    assert re.search(r"\b(alone|by myself)\b", alone) and "apartment" in alone
    dorm = ask(question, home="Dorm for Oak Hill College",
               met_at_home=["Wolfgang Schulz", "Maria Lopez"],
               living=["Klaus Mueller lives next door to Wolfgang Schulz in the dorm, though "
                       "they mostly see each other in passing."])
    assert "I live next door to Wolfgang Schulz" in dorm and "we mostly see" in dorm
    assert "Maria" in dorm
    assert "don't know" in ask(question) or "not sure" in ask(question)


def test_after_the_party_nobody_says_they_are_going_to_it_later():
    plans = ("9:00 am: serve customers", "5:00 pm: attend the Valentine's Day party",
             "7:00 pm: read a book")
    greeted = [("Maria Lopez", "Hi Klaus! How are you?")]
    before = line("Klaus Mueller", "Maria Lopez", greeted, plans=plans,
                  moment="Tuesday February 14, 2023, 3:20 pm")
    after = line("Klaus Mueller", "Maria Lopez", greeted, plans=plans,
                 moment="Tuesday February 14, 2023, 7:20 pm")
    assert "party" in before.text and "party" not in after.text
    view = talk.TalkView("Klaus Mueller", "Maria Lopez", moment="Tuesday February 14, 2023, 7:20 pm")
    assert view.is_over(PARTY.text) and not view.is_over(PARTY.text.replace("14", "15"))


def test_an_interjection_before_a_comma_is_not_someone_asked_after():
    heard = [("Klaus Mueller", "Guess what I heard, Wolfgang: Sam Moore intends to run for mayor."),
             ("Wolfgang Schulz", "Mm, I'd heard. What do you make of it, Klaus?")]
    reply = line("Klaus Mueller", "Wolfgang Schulz", heard)
    assert "isn't here" not in reply.text and "Mm" not in reply.text
    asked = [("Maria Lopez", "Hi!"), ("Isabella Rodriguez", "Hello, Maria."),
             ("Maria Lopez", "Klaus, are you around?")]
    assert "Klaus" in line("Isabella Rodriguez", "Maria Lopez", asked).text


def test_interview_answers_read_as_sentences():
    weekday = answered({"name": "Sam Moore", "memories": [],
                                "question": "Roughly, how does a normal weekday go for you?",
                                "plan": ["6:00 am to 7:00 am: wake up and shave"]})
    assert "Waking up and shaving from 6:00 am" in weekday
    into = answered({"name": "Tom Moreno", "question": "What are you into these days?",
                             "memories": [], "summary": "Name: Tom Moreno (age 50). He has been "
                             "following local politics and likes nothing better than an "
                             "argument with John."})
    assert "I've been following local politics and like nothing better" in into


def test_at_the_party_a_reply_answers_what_was_said_and_only_the_host_hosts():
    at_party = {"speaker_action": "trying the food at the Valentine's Day party",
                "partner_action": "dancing with the other guests"}
    asked = [("Klaus Mueller", "Have you tried the food yet, Maria? It's wonderful.")]
    reply = line("Maria Lopez", "Klaus Mueller", asked, [PARTY], **at_party)
    assert reply.text.split(" Word")[0] in {t.format(partner="Klaus", host="Isabella")
                                            for t in alternatives("party_reply_food")}
    arriving = line("Maria Lopez", "Klaus Mueller", [], [PARTY], **{
        **at_party, "speaker_action": "arriving at the Valentine's Day party and greeting the host"})
    hosts = {t.format(partner="Klaus", guest="").split("{")[0] for t in alternatives("host_talk")}
    assert arriving.text not in hosts
    hosting = line("Isabella Rodriguez", "Klaus Mueller", [], [PARTY], **{
        **at_party, "speaker_action": "chatting with the guests at the Valentine's Day party"})
    assert "Isabella really went all out" not in hosting.text


def test_a_step_is_never_finishing_up_still_doing_something():
    from townbot.llm.offline.steps import _work_steps

    steps = _work_steps("keep writing over a cup of tea", False, "pausing for a moment")
    assert not any("still" in step and not step.startswith("still") for step in steps)
    assert talk.core_activity("finishing up still writing over a cup of tea") == \
        "writing over a cup of tea"


def test_about_oneself_the_verb_after_an_adverb_is_in_the_first_person_too():
    from townbot.llm.offline.social import first_person

    said = first_person("Abigail Chen sometimes asks Francisco Lopez to voice characters.",
                        "Abigail Chen")
    assert said == "I sometimes ask Francisco Lopez to voice characters."


def test_a_gift_for_someone_a_memory_describes_fits_what_they_are():
    about = {"Jennifer Moore": ["Sam Moore has been married to Jennifer Moore, a watercolour "
                                "painter, for forty years.", "Jennifer Moore is reading a book"]}
    for question in ("From what you know of Jennifer Moore, what book might they enjoy?",
                     "If you were getting Jennifer Moore a birthday present, what would it be?",
                     "What would you say to Jennifer Moore to pay them a compliment?"):
        answer = answered({"name": "Sam Moore", "memories": [], "question": question,
                                   "about_people": about})
        assert "watercolour painter" in answer and "book about reading" not in answer
