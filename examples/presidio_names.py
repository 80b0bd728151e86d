"""plainsight's name finding inside a Presidio AnalyzerEngine (README: "Using plainsight inside Presidio").

Run:  python examples/presidio_names.py

Presidio is built explicitly on the pinned, checksum-verified en_core_web_sm (Presidio's own
default would try to download en_core_web_lg); PlainsightRecognizer is added to its registry like
any other recognizer.
"""

import logging

from presidio_analyzer import AnalyzerEngine, RecognizerRegistry

from plainsight.middleware.detection.presidio_engine import pinned_nlp_engine
from plainsight.middleware.detection.presidio_out import PlainsightRecognizer

logging.getLogger("presidio-analyzer").setLevel(logging.ERROR)  # its notes on non-English recognizers
nlp = pinned_nlp_engine()  # Presidio's SpacyNlpEngine on the pinned en_core_web_sm
registry = RecognizerRegistry(supported_languages=["en"])
registry.load_predefined_recognizers(nlp_engine=nlp, languages=["en"])
names = PlainsightRecognizer()
registry.add_recognizer(names)
analyzer = AnalyzerEngine(registry=registry, nlp_engine=nlp, supported_languages=["en"])

# One turn at a time, no memory: each call stands alone.
for r in analyzer.analyze(text="ok so my name is amara and i dont get fractions", language="en",
                          entities=["PERSON"], return_decision_process=True):
    print(r.entity_type, r.start, r.end, round(r.score, 2), r.analysis_explanation.textual_explanation)

# A conversation: one memory per conversation, passed for the calls made inside `session`.
memory = names.new_memory()
for role, text in [("student", "my name is jildau"), ("tutor", "jildau, what is 3/4 of 12?")]:
    with names.session(memory, role=role):
        found = analyzer.analyze(text=text, language="en", entities=["PERSON"])
    print(role, [text[r.start:r.end] for r in found])
