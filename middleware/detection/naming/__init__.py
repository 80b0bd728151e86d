"""The parts of person-name finding (:class:`middleware.detection.names.NameFinder`), one job each.

* ``tokens``   — word tokens of a turn and what the lexicon says of each (name class, word-likeness);
* ``context``  — the sentence and session around a token (pronouns, quantities, quotes, public talk);
* ``cues``     — direct evidence: greetings, vocatives, self-introductions, relations, titles, and
  answers to "what's your name?";
* ``story``    — the keep review of people talked about: word-problem and story characters;
* ``public``   — what is not private: public figures, characters, places, events, brands, examples;
* ``features`` — the learned reviewer's gate and features;
* ``spans``    — from decided tokens to name spans (full names, lists, merging name parts).

``names.py`` runs them in order for each turn; nothing here keeps state between turns except
through the session memory it is given.
"""
