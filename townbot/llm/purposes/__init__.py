"""Every purpose the mind asks a model for, one module each: the typed question (the context its
prompt is rendered from, with the template's name), the answer's schema, the safe default, the
check of a well-formed answer and the offline model's answer. `common` holds what they share.

The schemas are named here too, for the modules that use several.
"""

from townbot.llm.purposes.answer import Answer
from townbot.llm.purposes.choose_place import PlaceAndArea, PlaceChoice, place_and_area_among
from townbot.llm.purposes.conversation import Exchange, WholeConversation, conversation_among
from townbot.llm.purposes.day_plan import DayPlan
from townbot.llm.purposes.decompose import Decomposition, Step, decomposition_among
from townbot.llm.purposes.hourly_schedule import HourlySchedule, ScheduleBlock, schedule_among
from townbot.llm.purposes.importance import ImportanceScores, importance_scores
from townbot.llm.purposes.insights import Insight, Insights
from townbot.llm.purposes.label_answers import Labels
from townbot.llm.purposes.probe import Ready
from townbot.llm.purposes.rank_answers import Ranking
from townbot.llm.purposes.react import Reaction
from townbot.llm.purposes.reflection_questions import ReflectionQuestions
from townbot.llm.purposes.relationship import Relationship
from townbot.llm.purposes.revise_plan import PlanRevision
from townbot.llm.purposes.summary import AgentSummary
from townbot.llm.purposes.takeaways import PersonTakeaways, Takeaways, takeaways_among
from townbot.llm.purposes.utterance import Utterance

__all__ = ["AgentSummary", "Answer", "DayPlan", "Decomposition", "Exchange", "HourlySchedule",
           "ImportanceScores", "Insight", "Insights", "Labels", "PersonTakeaways", "PlaceAndArea",
           "PlaceChoice", "PlanRevision", "Ranking", "Reaction", "Ready", "ReflectionQuestions",
           "Relationship", "ScheduleBlock", "Step", "Takeaways", "Utterance", "WholeConversation",
           "conversation_among", "decomposition_among", "importance_scores", "place_and_area_among",
           "schedule_among", "takeaways_among"]
